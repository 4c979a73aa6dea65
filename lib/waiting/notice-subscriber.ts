import { toLockError } from '../errors.js';
import type { PubSubPort } from '../redis/port.js';

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

  async close(): Promise<void> {
    const channels = [...this.#listeners.keys()];
    this.#listeners.clear();
    await this.#port?.close(channels);
  }
}
