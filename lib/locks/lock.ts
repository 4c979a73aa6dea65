import type { LockCore } from '../core.js';
import { exclusiveWait, type WaitTarget } from '../keys.js';
import type { Acquired } from '../wait.js';
import { BaseLock } from './base-lock.js';
import { newRequestId } from './request-id.js';

/**
 * The reentrant, non-fair lock: a Redis hash (owner id → hold count) whose TTL is the lease.
 * Waiters are woken one client per release (see the acquire and release scripts).
 */
export class ReentrantLock extends BaseLock {
  readonly #wait: WaitTarget;

  constructor(core: LockCore, name: unknown) {
    super(core, name, 'lock');
    this.#wait = exclusiveWait(this.keys);
  }

  protected override acquireFor(
    owner: string,
    waitMs: number | undefined,
    leaseMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Acquired | false> {
    const { core, keys } = this;
    const ttlMs = this.ttlFor(leaseMs);
    return this.acquireWaiting(this.#wait, owner, waitMs, signal, async (mode) => {
      const sentAt = performance.now();
      const holderTtl = await core.scripts.acquire(keys, owner, ttlMs, core.clientId, mode);
      return holderTtl === null ? { acquired: true, sentAt } : { acquired: false, ttlMs: holderTtl };
    });
  }

  protected override releaseFor(owner: string, reExpireMs: number): Promise<number> {
    const { core } = this;
    return core.scripts.release(this.keys, owner, reExpireMs, newRequestId(), core.publish);
  }
}

