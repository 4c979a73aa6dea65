import { toLockError } from '../errors.js';
import type { PubSubPort } from '../redis/port.js';
import { settleWithin } from '../settle-within.js';

/** How long close() waits for the goodbyes (UNSUBSCRIBE, QUIT) to be answered, ms. */
const CLOSE_GOODBYE_MS = 1_000;

/** What a subscribed channel is told. */
export interface NoticeListener {
  /** A wake-up notice arrived on the channel; `message` is what was published. */
  notify(message: string): void;
  /** The connection came back: notices may have been missed while it was down. */
  resync(): void;
}

/**
 * The client's one pub/sub connection (on a Cluster with sharded pub/sub: one per master),
 * whichever client it is: routes each channel's notices to its listener, and tells every
 * listener to resynchronise when the subscriptions came back after a reconnect, since notices
 * published meanwhile are lost.
 */
export class NoticeSubscriber {
  readonly #listeners = new Map<string, NoticeListener>();
  readonly #onError: (error: unknown) => void;
  #port: PubSubPort | undefined;

  constructor(onError: (error: unknown) => void) {
    this.#onError = onError;
  }

  /** Starts using `port`. */
  attach(port: PubSubPort): void {
    this.#port = port;
    port.start({
      message: (channel, message) => this.#listeners.get(channel)?.notify(message),
      resubscribed: () => {
        for (const listener of this.#listeners.values()) listener.resync();
      },
      error: this.#onError,
    });
  }

  #connection(): PubSubPort {
    if (!this.#port) throw new Error('rlock: the notice subscriber is not attached yet');
    return this.#port;
  }

  async subscribe(channel: string, listener: NoticeListener): Promise<void> {
    const port = this.#connection();
    this.#listeners.set(channel, listener);
    try {
      await port.subscribe(channel);
    } catch (error) {
      if (this.#listeners.get(channel) === listener) this.#listeners.delete(channel);
      // A waiter's call fails with it: a lock error, whatever the client threw.
      throw toLockError(error, 'acquire', undefined);
    }
  }

  async unsubscribe(channel: string): Promise<void> {
    const port = this.#connection();
    this.#listeners.delete(channel);
    await port.unsubscribe(channel);
  }

  /**
   * Leaves the channels (closes rlock's own connection), waiting at most CLOSE_GOODBYE_MS for
   * Redis to answer: a silent connection must not hold close() up; rlock's own is cut then.
   */
  async close(): Promise<void> {
    const channels = [...this.#listeners.keys()];
    this.#listeners.clear();
    const port = this.#port;
    if (port === undefined) return;
    if (!(await settleWithin(port.close(channels), CLOSE_GOODBYE_MS))) port.abandon();
  }
}
