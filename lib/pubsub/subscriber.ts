import type { Redis } from 'ioredis';
import type { RedisConnection } from '../scripts/registry.js';
import type { PubSubMode } from '../topology.js';

/** What a subscribed channel is told. */
export interface NoticeListener {
  /** A wake-up notice arrived on the channel; `message` is what was published. */
  notify(message: string): void;
  /** The connection came back: notices may have been missed while it was down. */
  resync(): void;
}

interface Attached {
  readonly conn: RedisConnection;
  readonly owned: boolean;
  readonly sharded: boolean;
}

/**
 * The client's one pub/sub connection (on a Cluster: ioredis' sharded subscribers, one per
 * master). ioredis re-subscribes by itself after a reconnect or a topology change; what it
 * cannot do is replay the notices published meanwhile, so listeners are told to resynchronise.
 */
export class NoticeSubscriber {
  readonly #listeners = new Map<string, NoticeListener>();
  readonly #onError: (error: unknown) => void;
  #attached: Attached | undefined;
  #wasReady = false;
  /** One wait for the handshake, shared by every subscribe that comes during it. */
  #readying: Promise<void> | undefined;

  constructor(onError: (error: unknown) => void) {
    this.#onError = onError;
  }

  /** Starts using `conn`; an `owned` connection is closed by close(). */
  attach(conn: RedisConnection, owned: boolean, mode: PubSubMode): void {
    const sharded = mode === 'sharded';
    this.#attached = { conn, owned, sharded };
    this.#wasReady = conn.status === 'ready';
    conn.on(sharded ? 'smessage' : 'message', this.#onMessage);
    conn.on('ready', this.#onReady);
    // A Cluster's sharded subscribers re-subscribe after a topology change, then say so.
    conn.on('subscribersReady', this.#onResubscribed);
    // An owned connection has no other listener: an unhandled 'error' would crash the process.
    if (owned) conn.on('error', this.#onError);
  }

  readonly #onMessage = (channel: string, message: string): void => {
    this.#listeners.get(channel)?.notify(message);
  };

  readonly #onReady = (): void => {
    if (this.#wasReady) void this.#resyncOnceLive();
    this.#wasReady = true;
  };

  /**
   * ioredis emits `ready` (on the next tick) after writing its re-SUBSCRIBE, but before Redis
   * answered it: a notice published in between reaches nobody, and a waiter that re-asked in
   * that window would sleep through the release. A PING written now is answered after the
   * re-SUBSCRIBE, so waiters re-ask once their channels are live again.
   */
  async #resyncOnceLive(): Promise<void> {
    const conn = this.#attached?.conn;
    if (conn && !conn.isCluster) await (conn as Redis).ping().catch(() => undefined);
    this.#onResubscribed();
  }

  readonly #onResubscribed = (): void => {
    for (const listener of this.#listeners.values()) listener.resync();
  };

  #connection(): Attached {
    if (!this.#attached) throw new Error('rlock: the notice subscriber is not attached yet');
    return this.#attached;
  }

  async subscribe(channel: string, listener: NoticeListener): Promise<void> {
    const { conn, sharded } = this.#connection();
    this.#listeners.set(channel, listener);
    try {
      // During the handshake ('connect') ioredis 5 writes SUBSCRIBE at once, ahead of its ready
      // check; that INFO then fails in subscriber mode, ioredis reconnects, and the subscription
      // is gone although SUBSCRIBE resolved (ioredis#2037). Before and after the handshake,
      // commands wait in the offline queue until the connection is ready.
      if (conn.status === 'connect') await (this.#readying ??= this.#ready(conn).finally(() => (this.#readying = undefined)));
      await (sharded ? conn.ssubscribe(channel) : conn.subscribe(channel));
    } catch (error) {
      if (this.#listeners.get(channel) === listener) this.#listeners.delete(channel);
      throw error;
    }
  }

  /** Resolves once the connection is ready; rejects when ioredis gives up on it. */
  #ready(conn: RedisConnection): Promise<void> {
    return new Promise((resolve, reject) => {
      const onReady = (): void => {
        conn.off('end', onEnd);
        resolve();
      };
      const onEnd = (): void => {
        conn.off('ready', onReady);
        reject(new Error('the pub/sub connection closed before it was ready'));
      };
      conn.once('ready', onReady);
      conn.once('end', onEnd);
    });
  }

  async unsubscribe(channel: string): Promise<void> {
    const { conn, sharded } = this.#connection();
    this.#listeners.delete(channel);
    await (sharded ? conn.sunsubscribe(channel) : conn.unsubscribe(channel));
  }

  async close(): Promise<void> {
    const channels = [...this.#listeners.keys()];
    this.#listeners.clear();
    const attached = this.#attached;
    if (!attached) return;
    const { conn, owned, sharded } = attached;
    conn.off(sharded ? 'smessage' : 'message', this.#onMessage);
    conn.off('ready', this.#onReady);
    conn.off('subscribersReady', this.#onResubscribed);
    if (owned) {
      try {
        await conn.quit();
      } catch {
        conn.disconnect();
      }
    } else if (channels.length > 0) {
      const leave = sharded ? channels.map((channel) => conn.sunsubscribe(channel)) : [conn.unsubscribe(...channels)];
      await Promise.all(leave).catch(() => undefined);
    }
  }
}
