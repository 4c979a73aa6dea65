import type { Redis } from 'ioredis';

/** What a subscribed channel is told. */
export interface NoticeListener {
  /** A wake-up notice arrived on the channel; `message` is what was published. */
  notify(message: string): void;
  /** The connection came back: notices may have been missed while it was down. */
  resync(): void;
}

/**
 * The client's one pub/sub connection. ioredis re-subscribes by itself after a reconnect;
 * what it cannot do is replay the notices published meanwhile, so listeners are told to
 * resynchronise on every `ready` after the first.
 */
export class NoticeSubscriber {
  readonly #conn: Redis;
  readonly #owned: boolean;
  readonly #listeners = new Map<string, NoticeListener>();
  #wasReady: boolean;

  constructor(conn: Redis, owned: boolean, onError: (error: unknown) => void) {
    this.#conn = conn;
    this.#owned = owned;
    this.#wasReady = conn.status === 'ready';
    conn.on('message', this.#onMessage);
    conn.on('ready', this.#onReady);
    // An owned connection has no other listener: an unhandled 'error' would crash the process.
    if (owned) conn.on('error', onError);
  }

  readonly #onMessage = (channel: string, message: string): void => {
    this.#listeners.get(channel)?.notify(message);
  };

  readonly #onReady = (): void => {
    if (this.#wasReady) for (const listener of this.#listeners.values()) listener.resync();
    this.#wasReady = true;
  };

  async subscribe(channel: string, listener: NoticeListener): Promise<void> {
    this.#listeners.set(channel, listener);
    try {
      await this.#conn.subscribe(channel);
    } catch (error) {
      if (this.#listeners.get(channel) === listener) this.#listeners.delete(channel);
      throw error;
    }
  }

  async unsubscribe(channel: string): Promise<void> {
    this.#listeners.delete(channel);
    await this.#conn.unsubscribe(channel);
  }

  async close(): Promise<void> {
    const channels = [...this.#listeners.keys()];
    this.#listeners.clear();
    this.#conn.off('message', this.#onMessage);
    this.#conn.off('ready', this.#onReady);
    if (this.#owned) {
      try {
        await this.#conn.quit();
      } catch {
        this.#conn.disconnect();
      }
    } else if (channels.length > 0) {
      await this.#conn.unsubscribe(...channels).catch(() => undefined);
    }
  }
}
