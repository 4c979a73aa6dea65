import { WakeChannel, type SleeperSlot, type WakeChannelHooks, type WakeReason } from '../waiting/wake-channel.js';

/**
 * The local waiters of one client on one count-down latch: the notice that the latch reached 0
 * wakes every one of them; a waiter busy asking Redis gets it at its next sleep.
 */
export class LatchWaiterQueue extends WakeChannel {
  readonly #waiters = new Map<symbol, { sleeper: SleeperSlot['sleeper']; noticed: boolean }>();
  readonly #onEmpty: () => void;

  constructor(hooks: WakeChannelHooks, lingerMs: number, onEmpty: () => void) {
    super(hooks, lingerMs);
    this.#onEmpty = onEmpty;
  }

  enter(id: symbol): void {
    this.#waiters.set(id, { sleeper: undefined, noticed: false });
    this.join();
  }

  /** Leaves; `opened`: it saw the latch open (else the client may leave the waiter set). */
  leave(id: symbol, opened: boolean): void {
    if (!this.#waiters.delete(id)) return;
    if (this.#waiters.size === 0 && !opened && !this.closed) this.#onEmpty();
    this.part();
  }

  notify(): void {
    for (const waiter of this.#waiters.values()) {
      if (waiter.sleeper) waiter.sleeper.wake('notice');
      else waiter.noticed = true;
    }
  }

  sleep(id: symbol, ms: number, signal?: AbortSignal): Promise<WakeReason> {
    const waiter = this.#waiters.get(id);
    if (!waiter) throw new Error('rlock: a latch waiter sleeps without having entered');
    if (!this.closed && !signal?.aborted && waiter.noticed) {
      waiter.noticed = false;
      return Promise.resolve('notice');
    }
    return this.park(ms, signal, waiter);
  }
}
