import { randomBytes } from 'node:crypto';
import type { LockCore } from '../core.js';
import { WATCHDOG_LEASE } from '../validate.js';
import { acquireOnce, acquireWithin, type AttemptResult } from '../wait.js';
import { WaiterMode } from '../scripts/registry.js';
import { BaseLock } from './base-lock.js';

/**
 * The reentrant, non-fair lock: a Redis hash (owner id → hold count) whose TTL is the lease.
 * Waiters are woken one client per release (see the acquire and release scripts).
 */
export class ReentrantLock extends BaseLock {
  constructor(core: LockCore, name: unknown) {
    super(core, name, 'lock');
  }

  protected override acquireFor(
    owner: string,
    waitMs: number | undefined,
    leaseMs: number,
    signal: AbortSignal | undefined,
  ): Promise<number | false> {
    const { core, keys } = this;
    const ttlMs = leaseMs === WATCHDOG_LEASE ? core.watchdogTimeoutMs : leaseMs;
    const attempt = async (mode: WaiterMode): Promise<AttemptResult> => {
      const sentAt = performance.now();
      const holderTtl = await core.scripts.acquire(keys, owner, ttlMs, core.clientId, mode);
      return holderTtl === null ? { acquired: true, sentAt } : { acquired: false, ttlMs: holderTtl };
    };
    const abandon = (): void => this.abandon(owner);
    if (waitMs === 0) return acquireOnce(() => attempt(WaiterMode.Single), { signal, abandon });
    return acquireWithin({
      attempt,
      abandon,
      signal,
      waiters: { peek: () => core.waiters.peek(keys), get: () => core.waiters.get(keys) },
      deadline: waitMs === undefined ? Infinity : performance.now() + waitMs,
      noTtlSleepMs: core.watchdogTimeoutMs,
    });
  }

  protected override releaseFor(owner: string, reExpireMs: number): Promise<number> {
    const { core } = this;
    return core.scripts.release(this.keys, owner, reExpireMs, randomBytes(9).toString('base64url'), core.publish);
  }
}
