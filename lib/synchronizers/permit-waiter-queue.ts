import { WakeChannel, type SleeperSlot, type WakeChannelHooks, type WakeReason } from '../waiting/wake-channel.js';

interface PermitWaiter extends SleeperSlot {
  readonly need: number;
  /** A notice for it arrived while it was busy asking Redis: its next sleep ends at once. */
  noticed: boolean;
  /** Permits a notice offered this client for this waiter, not yet used by an attempt (0: none). */
  promised: number;
}

/** What a semaphore's local queue asks of Redis. */
export interface PermitWaiterHooks extends WakeChannelHooks {
  /**
   * Hands back `permits` that Redis promised this client and no local waiter will use ('all':
   * everything promised to it), leaving the waiter set if `leave`; Redis then offers every free
   * permit to other clients.
   */
  passWake(permits: number | 'all', leave: boolean): void;
  /** The last local waiter gave up, with nothing promised: leave the semaphore's waiter set. */
  leaveWaiterSet(): void;
}

/**
 * The local waiters of one client on one non-fair semaphore. A notice names how many permits
 * Redis promised this client; it wakes local waiters in arrival order whose requests fit, each
 * keeping its share until its next attempt uses it, and hands back at once what none of them can
 * use. A waiter that leaves without using its share offers it to the others, or hands it back.
 * A notice for a waiter busy asking Redis is kept until its next sleep.
 */
export class PermitWaiterQueue extends WakeChannel {
  readonly #hooks: PermitWaiterHooks;
  readonly #waiters = new Map<symbol, PermitWaiter>();
  /** A waiter asked Redis after the client closed (so it may have registered again). */
  #askedWhenClosed = false;

  constructor(hooks: PermitWaiterHooks, lingerMs: number) {
    super(hooks, lingerMs);
    this.#hooks = hooks;
  }

  get othersWaiting(): boolean {
    return this.members > 1;
  }

  /**
   * What this client waits for, as the scripts take it: '<smallest request>,<all requests>', of
   * its waiters but `except` and those woken with a promised share (their attempts are on the
   * way); '' when there are none.
   */
  hint(except?: symbol): string {
    let smallest = Infinity;
    let total = 0;
    for (const [id, { need, promised }] of this.#waiters) {
      if (id === except || promised > 0) continue;
      smallest = Math.min(smallest, need);
      total += need;
    }
    return total === 0 ? '' : `${smallest},${total}`;
  }

  /** The permits promised for waiter `id` that its attempt, sent now, uses (then none are left). */
  claim(id: symbol): number {
    if (this.closed) this.#askedWhenClosed = true;
    const waiter = this.#waiters.get(id);
    if (!waiter) return 0;
    const promised = waiter.promised;
    waiter.promised = 0;
    return promised;
  }

  enter(id: symbol, need: number): void {
    this.#waiters.set(id, { need, sleeper: undefined, noticed: false, promised: 0 });
    this.join();
  }

  /** Leaves; `acquired`: it got its permits. */
  leave(id: symbol, acquired: boolean): void {
    const waiter = this.#waiters.get(id);
    if (!waiter) return;
    this.#waiters.delete(id);
    const last = this.#waiters.size === 0;
    if (this.closed) {
      // close() handed everything back; an attempt sent since may have registered the client again.
      if (last && this.#askedWhenClosed) this.#hooks.passWake('all', true);
    } else if (waiter.promised > 0) {
      // A share it did not use: to another local waiter that fits, else back to Redis.
      if (last) this.#hooks.passWake(waiter.promised, true);
      else this.notify(String(waiter.promised));
    } else if (last && !acquired) {
      this.#hooks.leaveWaiterSet();
    }
    this.part();
  }

  /**
   * The client closed: its waiters fail, and it leaves the waiter set and hands back whatever
   * Redis promised it (a notice on its way now reaches nobody, and a registration left behind,
   * say by a grant that raced a local waiter's, would draw notices nobody takes).
   */
  override close(error: Error): void {
    super.close(error);
    this.#hooks.passWake('all', true);
  }

  notify(message: string): void {
    const offered = Number(message) || 1;
    let budget = offered;
    if (!this.closed) {
      for (const waiter of this.#waiters.values()) {
        if (budget <= 0) break;
        if (waiter.need > budget || waiter.promised > 0) continue;
        budget -= waiter.need;
        waiter.promised = waiter.need;
        if (waiter.sleeper) waiter.sleeper.wake('notice');
        else waiter.noticed = true;
      }
    }
    if (budget <= 0) return;
    // What no local waiter can use goes back at once, for other clients.
    const nobody = this.closed || this.#waiters.size === 0;
    this.#hooks.passWake(budget, nobody);
    // Nothing here could use it, though waiters wait: a stale need hint sent it here (or a share
    // came back from a waiter that left). The wake-up took this client off the waiter set, and a
    // waiter busy asking Redis may have registered before it: its answer, still on its way, puts
    // it to sleep unregistered. So every waiter without a share asks again, sleepers now, busy
    // ones at their next sleep (which ends at once), and registers its real need.
    if (budget === offered && !nobody) {
      for (const waiter of this.#waiters.values()) {
        if (waiter.promised > 0) continue;
        if (waiter.sleeper) waiter.sleeper.wake('notice');
        else waiter.noticed = true;
      }
    }
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
