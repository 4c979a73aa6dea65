import { WakeChannel, type SleeperSlot, type WakeReason } from './wake-channel.js';

interface Waiter extends SleeperSlot {
  /** A turn notice arrived while this waiter was not sleeping. */
  noticed: boolean;
}

/**
 * The local waiters of one client on one fair lock. Each waiting call has a waiter id, and a
 * notice names the one waiter whose turn it is: only that one wakes. A notice for a waiter that
 * is busy asking Redis is kept until its next sleep; one for a waiter that left is dropped
 * (leaving the queue in Redis already passed the turn on).
 */
export class FairWaiterQueue extends WakeChannel {
  readonly #waiters = new Map<string, Waiter>();

  /** Joins as waiter `id`: from now on notices for it are kept. */
  enter(id: string): void {
    this.#waiters.set(id, { sleeper: undefined, noticed: false });
    this.join();
  }

  leave(id: string): void {
    if (this.#waiters.delete(id)) this.part();
  }

  notify(id: string): void {
    const waiter = this.#waiters.get(id);
    if (!waiter) return;
    if (waiter.sleeper) waiter.sleeper.wake('notice');
    else waiter.noticed = true;
  }

  /** Sleeps until waiter `id` is noticed, `ms` elapse, or `signal` aborts (rejecting with its reason). */
  sleep(id: string, ms: number, signal?: AbortSignal): Promise<WakeReason> {
    const waiter = this.#waiters.get(id);
    if (!waiter) throw new Error(`rlock: waiter ${id} sleeps without having entered`);
    if (!this.closed && !signal?.aborted && waiter.noticed) {
      waiter.noticed = false;
      return Promise.resolve('notice');
    }
    return this.park(ms, signal, waiter);
  }
}
