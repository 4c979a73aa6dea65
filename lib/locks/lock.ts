import { randomBytes } from 'node:crypto';
import type { LockCore } from '../core.js';
import { ScriptStatus } from '../errors.js';
import { WATCHDOG_LEASE } from '../validate.js';
import { acquireOnce, acquireWithin, type AttemptResult } from '../wait.js';
import type { WaiterMode } from '../scripts/registry.js';
import { BaseLock } from './base-lock.js';
import { NODE_LOCK, type NodeLock, type NodeLockSource, type RenewStatus } from './node-lock.js';

/**
 * The reentrant, non-fair lock: a Redis hash (owner id → hold count) whose TTL is the lease.
 * Waiters are woken one client per release (see the acquire and release scripts).
 */
export class ReentrantLock extends BaseLock implements NodeLockSource {
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
    if (waitMs === 0) return acquireOnce({ attempt, signal, abandon });
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

  /** This lock as one node of a RedLock (package-internal). */
  [NODE_LOCK](): NodeLock {
    const { core, keys } = this;
    return {
      core,
      keys,
      attempt: (owner, ttlMs, mode) => {
        core.assertOpen();
        return core.scripts.acquire(keys, owner, ttlMs, core.clientId, mode);
      },
      release: async (owner, reExpireMs) => {
        core.assertOpen();
        const epoch = core.connectionEpoch();
        const left = await this.releaseFor(owner, reExpireMs);
        // As in BaseLock: a final release resent after a reconnect finds nothing left to release.
        return left === ScriptStatus.NotHeld && core.connectionEpoch() !== epoch ? 0 : left;
      },
      renew: async (owner, ttlMs) => {
        core.assertOpen();
        const [status] = await core.scripts.renewMany([keys.lock], [owner], ttlMs);
        return status as RenewStatus;
      },
      holdCount: async (owner) => {
        core.assertOpen();
        return Number((await core.redis.hget(keys.lock, owner)) ?? 0);
      },
    };
  }
}
