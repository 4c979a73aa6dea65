import { tookIt } from './lost-attempt.js';
import type { LockCore } from '../core.js';
import { exclusiveWait, type WaitTarget } from '../keys.js';
import type { Acquired } from '../waiting/wait.js';
import { BaseLock } from './base-lock.js';
import { waitNonFair } from '../waiting/non-fair-wait.js';
import { OWNER_CALLS, type OwnerCalls } from '../owner-calls.js';
import type { HeldRequest, HoldsLeft } from '../scripts/registry.js';

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

  protected override acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false> {
    const { core, keys } = this;
    const ttlMs = this.ttlFor(leaseMs);
    return waitNonFair(this.core, this.#wait, waitMs, signal, (mode) => this.requestAttempt(owner, ttlMs, (request) => core.scripts.lock.attempt(keys, owner, ttlMs, core.waiters.listenerId, mode, request), tookIt), () => this.abandon(owner));
  }

  protected override releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<HoldsLeft> {
    const { core } = this;
    return this.request(owner, (request) => core.scripts.lock.release(this.keys, owner, reExpireMs, request, core.publish, recordMs), held);
  }

  /** Its calls by exact owner, with the one attempt a RedLock makes on each node (see OwnerCalls). */
  override [OWNER_CALLS](): OwnerCalls {
    const { core, keys } = this;
    return {
      ...super[OWNER_CALLS](),
      attempt: async (owner, ttlMs, mode) => {
        await this.open();
        return this.request(owner, (request) => core.scripts.lock.acquire(keys, owner, ttlMs, core.waiters.listenerId, mode, request));
      },
    };
  }
}
