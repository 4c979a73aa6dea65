import { WakeChannel, type WakeChannelHooks, type WakeReason } from './wake-channel.js';

/** What a queue asks of its owner (the registry that knows Redis). */
export interface WaiterQueueHooks extends WakeChannelHooks {
  /** Woken with no local waiter to use it: hand the wake-up on to the next client. */
  passWake(): void;
  /** The last local waiter gave up: leave the lock's waiter set in Redis. */
  leaveWaiterSet(): void;
}

/**
 * The local waiters of one client on one (non-fair) lock. Redis wakes one client per release;
 * this wakes one local waiter per notice, first come first served, or every local waiter for a
 * lock they can hold together (readers). A notice that arrives while a waiter is busy asking
 * Redis is kept as a permit, so no wake-up is lost.
 */
export class WaiterQueue extends WakeChannel {
  readonly #hooks: WaiterQueueHooks;
  readonly #wakeAll: boolean;
  #permits = 0;

  constructor(hooks: WaiterQueueHooks, lingerMs: number, wakeAll: boolean) {
    super(hooks, lingerMs);
    this.#hooks = hooks;
    this.#wakeAll = wakeAll;
  }

  /** Whether other local waiters wait besides the caller (decides the waiter-set bookkeeping). */
  get othersWaiting(): boolean {
    return this.members > 1;
  }

  /**
   * Joins as a waiter. From now on a notice for this client is kept for the waiters (not
   * passed on) even if it arrives before the first attempt's reply.
   */
  enter(): void {
    this.join();
  }

  /** Leaves; `acquired` says whether this waiter got the lock. */
  leave(acquired: boolean): void {
    // A notice received before an acquisition of ours is obsolete: the lock is ours now. Not so
    // for a shared lock: the other local waiters may take it too.
    if (acquired && !this.#wakeAll) this.#permits = 0;
    if (this.members === 1) {
      if (!acquired && !this.closed) {
        if (this.#permits > 0) this.#hooks.passWake();
        else this.#hooks.leaveWaiterSet();
      }
      this.#permits = 0;
    }
    this.part();
  }

  /**
   * A wake-up notice for this client: wake the longest sleeper, or keep it as a permit. For a
   * shared lock wake every sleeper, and give each waiter busy asking Redis a permit (its answer
   * may predate the release).
   */
  notify(): void {
    if (this.members === 0) {
      this.#hooks.passWake();
      return;
    }
    if (this.#wakeAll) {
      this.#permits = this.members - this.sleeping;
      this.resync();
      return;
    }
    if (!this.wakeLongestSleeper() && this.#permits < this.members) this.#permits += 1;
  }

  /** Sleeps until a notice, `ms` elapse, or `signal` aborts (rejecting with its reason). */
  sleep(ms: number, signal?: AbortSignal): Promise<WakeReason> {
    if (!this.closed && !signal?.aborted && this.#permits > 0) {
      this.#permits -= 1;
      return Promise.resolve('notice');
    }
    return this.park(ms, signal);
  }
}
