import { WakeChannel, type SleeperSlot, type WakeChannelHooks, type WakeReason } from '../pubsub/wake-channel.js';

interface PermitWaiter extends SleeperSlot {
  readonly need: number;
  /** A notice for it arrived while it was busy asking Redis: its next sleep ends at once. */
  noticed: boolean;
}

/** What a semaphore's local queue asks of Redis. */
export interface PermitWaiterHooks extends WakeChannelHooks {
  /** Woken for `budget` permits that no local waiter could use: hand them on to other clients. */
  passWake(budget: number): void;
  /** The last local waiter gave up: leave the semaphore's waiter set. */
  leaveWaiterSet(): void;
}

/**
 * The local waiters of one client on one non-fair semaphore. A notice names how many permits
 * this client may use; it wakes local waiters in arrival order whose requests fit, and hands on
 * what none of them can use. A notice for a waiter busy asking Redis is kept until its next sleep.
 */
export class PermitWaiterQueue extends WakeChannel {
  readonly #hooks: PermitWaiterHooks;
  readonly #waiters = new Map<symbol, PermitWaiter>();

  constructor(hooks: PermitWaiterHooks, lingerMs: number) {
    super(hooks, lingerMs);
    this.#hooks = hooks;
  }

  get othersWaiting(): boolean {
    return this.members > 1;
  }

  /** What this client waits for, as the scripts take it: '<smallest request>,<all requests>'. */
  get hint(): string {
    let smallest = Infinity;
    let total = 0;
    for (const { need } of this.#waiters.values()) {
      smallest = Math.min(smallest, need);
      total += need;
    }
    return total === 0 ? '1,1' : `${smallest},${total}`;
  }

  enter(id: symbol, need: number): void {
    this.#waiters.set(id, { need, sleeper: undefined, noticed: false });
    this.join();
  }

  /** Leaves; `acquired`: it got its permits; `unusedNotice`: it woke by a notice too late to use it. */
  leave(id: symbol, acquired: boolean, unusedNotice = false): void {
    const waiter = this.#waiters.get(id);
    if (!waiter) return;
    this.#waiters.delete(id);
    if (!acquired && (unusedNotice || waiter.noticed) && this.#waiters.size > 0 && !this.closed) {
      // Another local waiter may use the notice it leaves unused.
      this.notify(String(waiter.need));
    } else if (this.#waiters.size === 0 && !acquired && !this.closed) {
      // A notice it never used goes on to the next client; otherwise just stop waiting.
      if (unusedNotice || waiter.noticed) this.#hooks.passWake(waiter.need);
      else this.#hooks.leaveWaiterSet();
    }
    this.part();
  }

  notify(message: string): void {
    let budget = Number(message) || 1;
    const offered = budget;
    for (const waiter of this.#waiters.values()) {
      if (budget <= 0) break;
      if (waiter.need > budget || waiter.noticed) continue;
      budget -= waiter.need;
      if (waiter.sleeper) waiter.sleeper.wake('notice');
      else waiter.noticed = true;
    }
    if (budget < offered || this.closed) return;
    // Nobody here can use it: with no waiter left, hand it on; else a stale need hint sent it
    // here, and the longest sleeper asks again (and registers its real need).
    if (this.members === 0) this.#hooks.passWake(budget);
    else this.wakeLongestSleeper();
  }

  sleep(id: symbol, ms: number, signal?: AbortSignal): Promise<WakeReason> {
    const waiter = this.#waiters.get(id);
    if (!waiter) throw new Error('rlock: a semaphore waiter sleeps without having entered');
    if (!this.closed && !signal?.aborted && waiter.noticed) {
      waiter.noticed = false;
      return Promise.resolve('notice');
    }
    return this.park(ms, signal, waiter);
  }
}

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
