import type { Redis } from 'ioredis';

/** What a subscribed channel is told. */
export interface NoticeListener {
  /** A wake-up notice arrived on the channel. */
  notify(): void;
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

  readonly #onMessage = (channel: string): void => {
    this.#listeners.get(channel)?.notify();
  };

  readonly #onReady = (): void => {
    if (this.#wasReady) for (const listener of this.#listeners.values()) listener.resync();
    this.#wasReady = true;
  };

  async subscribe(channel: string, listener: NoticeListener): Promise<void> {
    this.#listeners.set(channel, listener);
    try {
      // During the handshake ('connect') ioredis 5 writes SUBSCRIBE at once, ahead of its ready
      // check; that INFO then fails in subscriber mode, ioredis reconnects, and the subscription
      // is gone although SUBSCRIBE resolved (ioredis#2037). Before and after the handshake,
      // commands wait in the offline queue until the connection is ready.
      if (this.#conn.status === 'connect') await this.#ready();
      await this.#conn.subscribe(channel);
    } catch (error) {
      if (this.#listeners.get(channel) === listener) this.#listeners.delete(channel);
      throw error;
    }
  }

  /** Resolves once the connection is ready; rejects when ioredis gives up on it. */
  #ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onReady = (): void => {
        this.#conn.off('end', onEnd);
        resolve();
      };
      const onEnd = (): void => {
        this.#conn.off('ready', onReady);
        reject(new Error('the pub/sub connection closed before it was ready'));
      };
      this.#conn.once('ready', onReady);
      this.#conn.once('end', onEnd);
    });
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
