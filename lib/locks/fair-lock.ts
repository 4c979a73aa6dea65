import { tookIt } from './lost-attempt.js';
import type { LockCore } from '../core.js';
import { acquireInTurn, type FairAttempt } from '../waiting/fair-wait.js';
import { acquireOnce, type Acquired } from '../waiting/wait.js';
import { BaseLock } from './base-lock.js';
import { fairQueue } from '../inspect/inspect.js';
import { inspectKeys } from '../keys.js';
import type { QueuedWaiter } from '../inspect/types.js';
import type { RFairLock } from './lock-interfaces.js';
import type { HeldRequest, HoldsLeft } from '../scripts/registry.js';

/** Numbers the waiting calls of this process; with the client id they name a waiter everywhere. */
let lastWaiter = 0;

/**
 * The reentrant fair lock: the same hash as the non-fair lock, plus a queue of waiting calls
 * in Redis (see fair-queue.lua). Waiting calls get the lock in the order they first asked for
 * it, across all clients; a release tells only the head of the queue.
 */
export class FairLock extends BaseLock implements RFairLock {
  constructor(core: LockCore, name: unknown) {
    super(core, name, 'fair-lock');
  }

  async getQueue(): Promise<QueuedWaiter[]> {
    await this.open();
    return fairQueue(this.core.scripts.inspect, inspectKeys(this.core.keyPrefix, this.name));
  }

  override async forceUnlock(): Promise<boolean> {
    await this.open();
    return this.request(undefined, (request) => this.core.scripts.fair.forceUnlock(this.keys, this.core.publish, request));
  }

  protected override acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false> {
    const { core, keys } = this;
    const ttlMs = this.ttlFor(leaseMs);
    const waitTimeoutMs = core.fairLockWaitTimeoutMs;
    const leave = (waiterId: string): void => void core.scripts.fair.leave(keys, waiterId, core.publish).catch((error: unknown) => core.events.emit('error', error));
    const attempt = (waiterId: string): Promise<FairAttempt> =>
      this.requestAttempt(owner, ttlMs, async (request) => {
        const sentAt = performance.now();
        const recheckMs = await core.scripts.fair.acquire(keys, owner, ttlMs, waiterId, waitTimeoutMs, request);
        return recheckMs === null ? { acquired: true, sentAt } : { acquired: false, recheckMs };
      }, tookIt, waiterId === '' ? undefined : () => leave(waiterId));
    const abandon = (): void => this.abandon(owner);
    if (waitMs === 0) return acquireOnce(() => attempt(''), { signal, abandon });
    lastWaiter += 1;
    const waiterId = `${core.waiters.listenerId}|${lastWaiter.toString(36)}`;
    return acquireInTurn({
      waiterId,
      attempt: () => attempt(waiterId),
      abandon,
      leave: () => leave(waiterId),
      signal,
      waiters: { peek: () => core.waiters.peekFair(keys), get: () => core.waiters.getFair(keys) },
      deadline: waitMs === undefined ? Infinity : performance.now() + waitMs,
      // A third of the timeout: a waiter keeps its place through two missed check-ins.
      checkInMs: waitTimeoutMs / 3,
    });
  }

  protected override releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<HoldsLeft> {
    const { core } = this;
    return this.request(owner, (request) => core.scripts.fair.release(this.keys, owner, reExpireMs, request, core.publish, recordMs), held);
  }
}
