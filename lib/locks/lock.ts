import type { LockCore } from '../core.js';
import { exclusiveWait, type WaitTarget } from '../keys.js';
import type { Acquired } from '../waiting/wait.js';
import { BaseLock } from './base-lock.js';
import { waitNonFair } from '../waiting/non-fair-wait.js';
import { NODE_LOCK, type NodeLock, type NodeLockSource } from './node-lock.js';
import type { HeldRequest } from '../scripts/registry.js';

/**
 * The reentrant, non-fair lock: a Redis hash (owner id → hold count) whose TTL is the lease.
 * Waiters are woken one client per release (see the acquire and release scripts).
 */
export class ReentrantLock extends BaseLock implements NodeLockSource {
  readonly #wait: WaitTarget;

  constructor(core: LockCore, name: unknown) {
    super(core, name, 'lock');
    this.#wait = exclusiveWait(this.keys);
  }

  protected override acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false> {
    const { core, keys } = this;
    const ttlMs = this.ttlFor(leaseMs);
    return waitNonFair(this.core, this.#wait, waitMs, signal, (mode) => this.request(owner, (request) => {
      const sentAt = performance.now();
      return core.scripts.lock
        .acquire(keys, owner, ttlMs, core.waiters.listenerId, mode, request)
        .then((holderTtl) => (holderTtl === null ? { acquired: true, sentAt } : { acquired: false, ttlMs: holderTtl }));
    }), () => this.abandon(owner));
  }

  protected override releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<number> {
    const { core } = this;
    return this.request(owner, (request) => core.scripts.lock.release(this.keys, owner, reExpireMs, request, core.publish, recordMs), held);
  }

  /** This lock as one node of a RedLock (package-internal). */
  [NODE_LOCK](): NodeLock {
    const { core, keys } = this;
    const open = async (): Promise<void> => {
      core.assertOpen();
      await core.ready();
    };
    return {
      core,
      keys,
      attempt: async (owner, ttlMs, mode) => {
        await open();
        return this.request(owner, (request) => core.scripts.lock.acquire(keys, owner, ttlMs, core.waiters.listenerId, mode, request));
      },
      release: async (owner, reExpireMs, recordMs) => {
        await open();
        return this.releaseFor(owner, reExpireMs, undefined, recordMs);
      },
      track: (owner, sentAt, leaseMs, maxRenewals) => this.trackHold(owner, sentAt, leaseMs, { quiet: true, maxRenewals }),
      heldRecord: (owner) => this.holdOf(owner),
      releaseHeld: async (owner, ticket) => {
        if (this.holdOf(owner)) return this.releaseOwner(owner, ticket);
        await open();
        return this.releaseFor(owner, 0, undefined, 1_000);
      },
      holdCount: async (owner) => {
        await open();
        return Number((await this.query(core.redis.command(['hget', keys.lock, owner], keys.lock))) ?? 0);
      },
    };
  }
}
