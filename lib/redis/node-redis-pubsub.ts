import { onAppEvent } from './app-events.js';
import { isReplyError } from './node-redis-errors.js';
import type { PubSubHandlers, PubSubPort } from './port.js';

type Listener = (message: string, channel: string) => void;

/** How many times one subscribe() sends its SUBSCRIBE at most, across reconnects. */
const SUBSCRIBE_SENDS = 10;

/** What the pub/sub side of node-redis offers, on a client, a cluster or a sentinel. */
export interface NodeRedisSubscribable {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: Listener): Promise<unknown>;
  unsubscribe(channel: string, listener?: Listener): Promise<unknown>;
  sSubscribe(channel: string, listener: Listener): Promise<unknown>;
  sUnsubscribe(channel: string, listener?: Listener): Promise<unknown>;
  close?(): Promise<unknown>;
  destroy(): unknown;
  /** A client's (a cluster and a sentinel have none). */
  ref?(): void;
  unref?(): void;
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

/** The application's connection rlock's own was made from, and the names of its end and its return. */
export interface AppConnection {
  readonly conn: NodeRedisSubscribable;
  readonly end: string;
  readonly ready: string;
}

/**
 * A pub/sub connection of node-redis. It listens per channel (there is no `message` event), and
 * re-subscribes by itself: a client before it says `ready` again, a cluster per node (sharded
 * channels move with their slot), a sentinel on the new master after a failover. rlock's own
 * connection is a `duplicate()` that it connects and closes itself.
 * It re-subscribes only the channels Redis had confirmed, though: a SUBSCRIBE whose socket
 * dropped before the answer is failed and forgotten, so subscribe() sends it again once the
 * connection is back (ioredis resends such a command itself).
 * rlock's own keeps the process alive only while a channel is wanted, and ends when the
 * application's connection ends (connected again at the next subscription once that is back).
 */
export class NodeRedisPubSub implements PubSubPort {
  readonly #conn: NodeRedisSubscribable;
  readonly #owned: boolean;
  readonly #sharded: boolean;
  #handlers: PubSubHandlers | undefined;
  #connecting: Promise<unknown> | undefined;
  #wasReady: boolean;
  #closed = false;
  /** Channels subscribe() was asked for and unsubscribe() not since: only these are sent again. */
  readonly #wanted = new Set<string>();
  /** subscribe() calls waiting for the connection to come back. */
  readonly #awaitingReconnect = new Set<() => void>();
  readonly #app: AppConnection | undefined;
  readonly #stopWatchingApp: (() => void)[] = [];

  constructor(conn: NodeRedisSubscribable, owned: boolean, sharded: boolean, app?: AppConnection) {
    this.#conn = conn;
    this.#owned = owned;
    this.#sharded = sharded;
    this.#wasReady = conn.isReady;
    this.#app = owned ? app : undefined;
    // Unref'd until a channel is wanted (node-redis keeps the setting across reconnects).
    if (owned) conn.unref?.();
  }

  start(handlers: PubSubHandlers): void {
    this.#handlers = handlers;
    const conn = this.#conn;
    conn.on('ready', this.#onReady);
    // A cluster's node clients come back one by one; a sentinel moves to a new master.
    conn.on('node-ready', this.#onResubscribed);
    conn.on('topology-change', this.#onResubscribed);
    // Only rlock listens to its own connection: an unhandled 'error' would crash the process.
    if (this.#owned) conn.on('error', this.#onError);
    const app = this.#app;
    if (app) this.#stopWatchingApp.push(onAppEvent(app.conn, app.end, this.#onAppEnd), onAppEvent(app.conn, app.ready, this.#onAppReady));
  }

  /** Ref the client while a channel is wanted (a waiter may count on it), unref it otherwise. */
  #holdProcess(): void {
    if (!this.#owned) return;
    if (this.#wanted.size > 0) this.#conn.ref?.();
    else this.#conn.unref?.();
  }

  /** The application's connection ended: so does rlock's (its pending subscriptions fail). */
  readonly #onAppEnd = (): void => {
    this.#connecting = undefined;
    if (this.#conn.isOpen) this.#conn.destroy();
  };

  /** The application's connection is back: so is rlock's if waiters listen (node-redis subscribes them again). */
  readonly #onAppReady = (): void => {
    if (!this.#closed && this.#wanted.size > 0) this.#open().catch(() => undefined);
  };

  readonly #listener: Listener = (message, channel) => this.#handlers?.message(channel, message);
  readonly #onError = (error: unknown): void => this.#handlers?.error(error);
  readonly #onResubscribed = (): void => {
    this.#wakeAwaiting();
    this.#handlers?.resubscribed();
  };

  readonly #onReady = (): void => {
    // node-redis re-subscribes before it says `ready` again: the channels are live now.
    if (this.#wasReady) this.#onResubscribed();
    else this.#wakeAwaiting();
    this.#wasReady = true;
  };

  #wakeAwaiting(): void {
    for (const wake of this.#awaitingReconnect) wake();
    this.#awaitingReconnect.clear();
  }

  /** Resolves when the connection (a client, a cluster's node, a sentinel's master) is ready again, or on close(). */
  #reconnected(): Promise<void> {
    return new Promise((resolve) => this.#awaitingReconnect.add(resolve));
  }

  async #open(): Promise<void> {
    // rlock's own duplicate: connected here, once (a Cluster refuses commands until it is ready),
    // and again after it ended with the application's connection.
    if (!this.#owned) return;
    if (this.#app && !this.#app.conn.isOpen) throw new Error("rlock: the application's connection is closed");
    this.#connecting ??= this.#conn.connect().catch((error: unknown) => {
      this.#connecting = undefined;
      throw error;
    });
    await this.#connecting;
  }

  async subscribe(channel: string): Promise<void> {
    this.#wanted.add(channel);
    this.#holdProcess();
    try {
      await this.#open();
      await this.#sendSubscribe(channel);
    } catch (error) {
      this.#wanted.delete(channel);
      this.#holdProcess();
      throw error;
    }
  }

  /** SUBSCRIBE, sent again after a reconnect that failed it. */
  async #sendSubscribe(channel: string): Promise<void> {
    for (let sends = 1; ; sends += 1) {
      // node-redis never answers a SUBSCRIBE sent on a closed client: fail it instead of hanging.
      if (this.#closed || !this.#conn.isOpen) throw new Error('rlock: the pub/sub connection is closed');
      try {
        await (this.#sharded ? this.#conn.sSubscribe(channel, this.#listener) : this.#conn.subscribe(channel, this.#listener));
        return;
      } catch (error) {
        // Redis' own refusal is final; so is a channel nobody wants any more.
        if (isReplyError(error) || sends === SUBSCRIBE_SENDS || !this.#wanted.has(channel)) throw error;
        if (!this.#conn.isReady) await this.#reconnected();
      }
    }
  }

  async unsubscribe(channel: string): Promise<void> {
    this.#wanted.delete(channel);
    this.#holdProcess();
    if (!this.#conn.isOpen) return;
    await (this.#sharded ? this.#conn.sUnsubscribe(channel, this.#listener) : this.#conn.unsubscribe(channel, this.#listener));
  }

  abandon(): void {
    if (this.#owned && this.#conn.isOpen) this.#conn.destroy();
  }

  async close(channels: readonly string[]): Promise<void> {
    this.#closed = true;
    this.#wakeAwaiting();
    const conn = this.#conn;
    conn.off('ready', this.#onReady);
    conn.off('node-ready', this.#onResubscribed);
    conn.off('topology-change', this.#onResubscribed);
    for (const stop of this.#stopWatchingApp.splice(0)) stop();
    if (this.#owned) {
      await this.#connecting?.catch(() => undefined);
      if (!conn.isOpen) return;
      try {
        await (conn.close ? conn.close() : conn.destroy());
      } catch {
        conn.destroy();
      }
      return;
    }
    await Promise.all(channels.map((channel) => this.unsubscribe(channel))).catch(() => undefined);
  }
}
