import { MAX_DURATION_MS } from '../validate.js';

/** Why a sleeping waiter woke up. */
export type WakeReason = 'notice' | 'timeout';

/** What a queue asks of its owner (the registry that knows Redis). */
export interface WaiterQueueHooks {
  subscribe(): Promise<void>;
  unsubscribe(): void;
  /** Woken with no local waiter to use it: hand the wake-up on to the next client. */
  passWake(): void;
  /** The last local waiter gave up: leave the lock's waiter set in Redis. */
  leaveWaiterSet(): void;
  /** The subscription lingered unused and is gone: forget this queue. */
  dropped(): void;
}

interface Sleeper {
  wake(reason: WakeReason): void;
  fail(error: unknown): void;
}

/**
 * The local waiters of one client on one lock. Redis wakes one client per release; this
 * wakes one local waiter per notice, first come first served, or every local waiter for a
 * lock they can hold together (readers). A notice that arrives while a waiter is busy asking
 * Redis is kept as a permit, so no wake-up is lost.
 */
export class WaiterQueue {
  readonly #hooks: WaiterQueueHooks;
  readonly #lingerMs: number;
  readonly #wakeAll: boolean;
  readonly #sleepers = new Set<Sleeper>();
  #members = 0;
  #permits = 0;
  #subscription: Promise<void> | undefined;
  #subscribed = false;
  #linger: NodeJS.Timeout | undefined;
  #closedWith: Error | undefined;

  constructor(hooks: WaiterQueueHooks, lingerMs: number, wakeAll: boolean) {
    this.#hooks = hooks;
    this.#lingerMs = lingerMs;
    this.#wakeAll = wakeAll;
  }

  /** True once the wake-up channel is subscribed: a notice published now will arrive. */
  get subscribed(): boolean {
    return this.#subscribed;
  }

  /** Whether other local waiters wait besides the caller (decides the waiter-set bookkeeping). */
  get othersWaiting(): boolean {
    return this.#members > 1;
  }

  /**
   * Joins as a waiter. From now on a notice for this client is kept for the waiters (not
   * passed on) even if it arrives before the first attempt's reply.
   */
  enter(): void {
    this.#members += 1;
    clearTimeout(this.#linger);
    this.#linger = undefined;
  }

  /** Resolves when the wake-up channel is subscribed (subscribing only on first need). */
  subscribe(): Promise<void> {
    this.#subscription ??= this.#hooks.subscribe().then(
      () => {
        this.#subscribed = true;
      },
      (error: unknown) => {
        this.#subscription = undefined;
        throw error;
      },
    );
    return this.#subscription;
  }

  /** Leaves; `acquired` says whether this waiter got the lock. */
  leave(acquired: boolean): void {
    this.#members -= 1;
    // A notice received before an acquisition of ours is obsolete: the lock is ours now. Not so
    // for a shared lock: the other local waiters may take it too.
    if (acquired && !this.#wakeAll) this.#permits = 0;
    if (this.#members > 0) return;
    if (!acquired && this.#closedWith === undefined) {
      if (this.#permits > 0) this.#hooks.passWake();
      else this.#hooks.leaveWaiterSet();
    }
    this.#permits = 0;
    if (this.#closedWith === undefined) {
      this.#linger = setTimeout(() => this.#drop(), this.#lingerMs);
      this.#linger.unref();
    }
  }

  /**
   * A wake-up notice for this client: wake the longest sleeper, or keep it as a permit. For a
   * shared lock wake every sleeper, and give each waiter busy asking Redis a permit (its answer
   * may predate the release).
   */
  notify(): void {
    if (this.#members === 0) {
      this.#hooks.passWake();
      return;
    }
    if (this.#wakeAll) {
      this.#permits = this.#members - this.#sleepers.size;
      this.#wakeEverySleeper();
      return;
    }
    const first = this.#sleepers.values().next();
    if (!first.done) {
      this.#sleepers.delete(first.value);
      first.value.wake('notice');
    } else if (this.#permits < this.#members) {
      this.#permits += 1;
    }
  }

  /** Notices may have been lost (reconnect): every sleeper asks Redis again. */
  resync(): void {
    this.#wakeEverySleeper();
  }

  #wakeEverySleeper(): void {
    for (const sleeper of [...this.#sleepers]) sleeper.wake('notice');
  }

  /** Sleeps until a notice, `ms` elapse, or `signal` aborts (rejecting with its reason). */
  sleep(ms: number, signal?: AbortSignal): Promise<WakeReason> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#permits > 0) {
      this.#permits -= 1;
      return Promise.resolve('notice');
    }
    return new Promise<WakeReason>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#sleepers.delete(sleeper);
        signal?.removeEventListener('abort', onAbort);
      };
      const sleeper: Sleeper = {
        wake: (reason) => {
          finish();
          resolve(reason);
        },
        fail: (error) => {
          finish();
          reject(error);
        },
      };
      const onAbort = (): void => sleeper.fail(signal?.reason);
      const timer = setTimeout(() => sleeper.wake('timeout'), Math.max(1, Math.min(ms, MAX_DURATION_MS)));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.add(sleeper);
    });
  }

  /** Fails every sleeper with `error` and drops the subscription. */
  close(error: Error): void {
    this.#closedWith = error;
    clearTimeout(this.#linger);
    for (const sleeper of [...this.#sleepers]) sleeper.fail(error);
  }

  #drop(): void {
    this.#linger = undefined;
    if (this.#members > 0) return;
    if (this.#subscription) this.#hooks.unsubscribe();
    this.#subscription = undefined;
    this.#subscribed = false;
    this.#hooks.dropped();
  }
}
