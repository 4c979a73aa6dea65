import { MAX_DURATION_MS } from '../validate.js';
import type { NoticeListener } from './notice-subscriber.js';

/** Why a sleeping waiter woke up. */
export type WakeReason = 'notice' | 'timeout';

/** What a channel asks of its owner (the registry that knows Redis). */
export interface WakeChannelHooks {
  subscribe(): Promise<void>;
  unsubscribe(): void;
  /** The subscription lingered unused and is gone: forget this channel. */
  dropped(): void;
}

/** One sleeping waiter. */
export interface Sleeper {
  wake(reason: WakeReason): void;
  fail(error: unknown): void;
}

/** Where a subclass keeps the sleeper of one sleep while it lasts. */
export interface SleeperSlot {
  sleeper: Sleeper | undefined;
}

/**
 * This client's wake-up channel for one lock, shared by its local waiters: subscribed on first
 * need, kept `lingerMs` after the last waiter left (so a busy lock does not subscribe and
 * unsubscribe on every wait), then dropped. Subclasses decide whom a notice wakes.
 */
export abstract class WakeChannel implements NoticeListener {
  readonly #hooks: WakeChannelHooks;
  readonly #lingerMs: number;
  readonly #sleepers = new Set<Sleeper>();
  #members = 0;
  #subscription: Promise<void> | undefined;
  #subscribed = false;
  #linger: NodeJS.Timeout | undefined;
  #closedWith: Error | undefined;

  constructor(hooks: WakeChannelHooks, lingerMs: number) {
    this.#hooks = hooks;
    this.#lingerMs = lingerMs;
  }

  /** True once the channel is subscribed: a notice published now will arrive. */
  get subscribed(): boolean {
    return this.#subscribed;
  }

  /** How many local waiters use the channel. */
  protected get members(): number {
    return this.#members;
  }

  /** How many local waiters sleep right now. */
  protected get sleeping(): number {
    return this.#sleepers.size;
  }

  /** True once the client closed: no notice will come. */
  protected get closed(): boolean {
    return this.#closedWith !== undefined;
  }

  /** A notice arrived; `message` is what the script published. */
  abstract notify(message: string): void;

  /** Resolves when the channel is subscribed (subscribing only on first need). */
  subscribe(): Promise<void> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    this.#subscription ??= this.#hooks.subscribe().then(
      () => {
        this.#subscribed = true;
      },
      (error: unknown) => {
        this.#subscription = undefined;
        // close() shut the connection under the subscription: the waiter fails as closed.
        throw this.#closedWith ?? error;
      },
    );
    return this.#subscription;
  }

  /** Notices may have been lost (reconnect): every sleeper asks Redis again. */
  resync(): void {
    for (const sleeper of [...this.#sleepers]) sleeper.wake('notice');
  }

  /** Fails every sleeper with `error`; the channel is not used again. */
  close(error: Error): void {
    this.#closedWith = error;
    clearTimeout(this.#linger);
    for (const sleeper of [...this.#sleepers]) sleeper.fail(error);
  }

  /** A waiter starts using the channel. */
  protected join(): void {
    this.#members += 1;
    clearTimeout(this.#linger);
    this.#linger = undefined;
  }

  /** A waiter stops using the channel; after the last one it lingers, then is dropped. */
  protected part(): void {
    this.#members -= 1;
    if (this.#members > 0 || this.closed) return;
    this.#linger = setTimeout(() => this.#drop(), this.#lingerMs);
    this.#linger.unref();
  }

  /**
   * Sleeps until woken, `ms` elapse, or `signal` aborts (rejecting with its reason). While it
   * sleeps, its sleeper is in `slot` (if given) so the subclass can wake it by name.
   */
  protected park(ms: number, signal: AbortSignal | undefined, slot?: SleeperSlot): Promise<WakeReason> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<WakeReason>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#sleepers.delete(sleeper);
        if (slot?.sleeper === sleeper) slot.sleeper = undefined;
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
      if (slot) slot.sleeper = sleeper;
    });
  }

  /** Wakes the longest sleeper; false when nobody sleeps. */
  protected wakeLongestSleeper(): boolean {
    const first = this.#sleepers.values().next();
    if (first.done) return false;
    first.value.wake('notice');
    return true;
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
