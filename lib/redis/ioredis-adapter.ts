import type { Socket } from 'node:net';
import { onAppEvent } from './app-events.js';
import { ConnectionFacts, type Arg, type LuaScript, type PubSubHandlers, type PubSubPort, type RedisPort, type ReplicaAck, type ServerNode } from './port.js';
import { ScriptSender } from './ioredis-script-command.js';
import { WriteBatch, type CorkableSocket } from './write-batch.js';

/** The members of an ioredis (or iovalkey) `Redis` or `Cluster` this adapter uses. */
export interface IoRedisLike {
  readonly options: { keyPrefix?: string; host?: string; port?: number; path?: string; db?: number; sentinels?: unknown; shardedSubscribers?: boolean };
  readonly status: string;
  readonly isCluster?: boolean;
  /** A standalone or Sentinel connection's socket (none on a Cluster, whose nodes have their own). */
  readonly stream?: CorkableSocket;
  readonly slots?: string[][];
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  duplicate(...args: unknown[]): IoRedisLike;
  call(command: string, ...args: Arg[]): Promise<unknown>;
  pipeline(): IoPipeline;
  nodes?(role: 'master'): IoRedisLike[];
  ping(): Promise<unknown>;
  subscribe(...channels: string[]): Promise<unknown>;
  unsubscribe(...channels: string[]): Promise<unknown>;
  ssubscribe(...channels: string[]): Promise<unknown>;
  sunsubscribe(...channels: string[]): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
  connect(): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  once(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

interface IoPipeline {
  call(command: string, ...args: Arg[]): IoPipeline;
  exec(): Promise<[Error | null, unknown][] | null>;
}

type ScriptCall = (...args: Arg[]) => Promise<unknown>;

/** The reply of command `index` of a pipeline, or its error thrown. */
function replyOf(replies: [Error | null, unknown][] | null, index: number): unknown {
  const entry = replies?.[index];
  if (!entry) throw new Error('rlock: the pipeline returned no reply');
  if (entry[0]) throw entry[0];
  return entry[1];
}

function addressOf(conn: IoRedisLike): string {
  const { host, port, path } = conn.options;
  return path ?? `${host ?? 'localhost'}:${port ?? 6379}`;
}

/** Whether `value` looks like an ioredis or iovalkey `Redis` or `Cluster`. */
export function isIoRedisLike(value: object): value is IoRedisLike {
  const conn = value as Partial<IoRedisLike>;
  return typeof conn.defineCommand === 'function' && typeof conn.duplicate === 'function' && typeof conn.status === 'string';
}

/**
 * ioredis and iovalkey: scripts go through `defineCommand`, so the client itself decides EVAL or
 * EVALSHA when it writes a call, per socket (the text the first time on a socket): calls queued
 * or resent across a reconnect to a restarted server (empty script cache) keep their order.
 */
export class IoRedisPort extends ConnectionFacts implements RedisPort {
  readonly #conn: IoRedisLike;
  readonly #defined = new Set<string>();
  /** One system call for the writes of a tick (a Cluster's commands go through its nodes). */
  readonly #batch: WriteBatch | undefined;
  /** Scripts as Commands of one class, made at the first script (a Cluster's go through defineCommand: its nodes route them). */
  #scripts: ScriptSender | undefined | false;
  readonly #sha1: (text: string) => string;

  constructor(conn: IoRedisLike, sha1: (text: string) => string) {
    const cluster = conn.isCluster === true;
    // ioredis' Cluster has the sharded-subscriber option (5.9+); iovalkey's does not.
    const family = cluster && !('shardedSubscribers' in conn.options) ? 'iovalkey' : 'ioredis';
    const deployment = cluster ? 'cluster' : conn.options.sentinels ? 'sentinel' : 'standalone';
    super({
      family,
      deployment,
      connection: conn,
      keyPrefix: conn.options.keyPrefix ?? '',
      shardedPubSub: cluster && family === 'ioredis',
      address: deployment !== 'standalone' ? undefined : conn.options.path ? `unix:${conn.options.path}` : addressOf(conn),
      db: conn.options.db ?? 0,
    });
    this.#conn = conn;
    this.#batch = cluster ? undefined : new WriteBatch(() => conn.stream);
    this.#scripts = cluster ? false : undefined;
    this.#sha1 = sha1;
  }

  #script(script: LuaScript): string {
    if (!this.#defined.has(script.name)) {
      // Another LockClient on the same connection may have defined it already.
      if (typeof (this.#conn as unknown as Record<string, unknown>)[script.name] !== 'function') {
        const { lua, numberOfKeys } = script;
        this.#conn.defineCommand(script.name, numberOfKeys === undefined ? { lua } : { lua, numberOfKeys });
      }
      this.#defined.add(script.name);
    }
    return script.name;
  }

  runScript(script: LuaScript, args: readonly Arg[]): Promise<unknown> {
    this.#batch?.join();
    if (this.#scripts) return this.#scripts.run(script, args);
    const name = this.#script(script);
    if (this.#scripts === undefined) {
      this.#scripts = ScriptSender.for(this.#conn, name, this.keyPrefix, this.#sha1) ?? false;
      if (this.#scripts) return this.#scripts.run(script, args);
    }
    const fn = (this.#conn as unknown as Record<string, ScriptCall>)[name]!;
    return fn.apply(this.#conn, args as Arg[]);
  }

  async runScriptThenWait(script: LuaScript, args: readonly Arg[], ack: ReplicaAck): Promise<[unknown, number]> {
    const pipeline = this.#conn.pipeline();
    void (pipeline as unknown as Record<string, ScriptCall>)[this.#script(script)]!(...args);
    pipeline.call('wait', ack.replicas, ack.timeoutMs);
    const replies = await pipeline.exec();
    return [replyOf(replies, 0), Number(replyOf(replies, 1))];
  }

  command(args: readonly Arg[]): Promise<unknown> {
    // ioredis finds the keys of a known command itself: it prefixes them and routes by them.
    this.#batch?.join();
    return this.#conn.call(String(args[0]), ...args.slice(1));
  }

  async waitForReplicas(key: string, ack: ReplicaAck): Promise<number> {
    // EXISTS pins the pipeline to the key's node on a Cluster; WAIT itself has no key.
    const replies = await this.#conn.pipeline().call('exists', key).call('wait', ack.replicas, ack.timeoutMs).exec();
    return Number(replyOf(replies, 1));
  }

  masters(): Promise<ServerNode[]> {
    const nodes = this.deployment === 'cluster' ? this.#conn.nodes!('master') : [this.#conn];
    return Promise.resolve(nodes.map((node) => ({ address: addressOf(node), command: (args) => node.call(String(args[0]), ...args.slice(1)) })));
  }

  slotOwner(slot: number): string | undefined {
    return this.#conn.slots?.[slot]?.[0];
  }

  openPubSub(sharded: boolean): PubSubPort {
    // Connected at the first subscription, not before: a client that never waits opens nothing.
    const conn = this.deployment === 'cluster' ? this.#conn.duplicate([], { shardedSubscribers: sharded }) : this.#conn.duplicate({ lazyConnect: true });
    return new IoRedisPubSub(conn, true, sharded, this.#conn);
  }
}

/**
 * A pub/sub connection of ioredis or iovalkey. The client re-subscribes by itself after a
 * reconnect or a topology change; rlock is told when the subscriptions are live again.
 * rlock's own connection (made from `app`, the application's) keeps the process alive only
 * while a channel is subscribed, and ends when `app` ends: an idle LockClient never holds a
 * process open. It connects again at the next subscription once `app` is back.
 */
export class IoRedisPubSub implements PubSubPort {
  readonly #conn: IoRedisLike;
  readonly #owned: boolean;
  readonly #sharded: boolean;
  readonly #app: IoRedisLike | undefined;
  #handlers: PubSubHandlers | undefined;
  #wasReady = false;
  /** One wait for the handshake, shared by every subscribe that comes during it. */
  #readying: Promise<void> | undefined;
  /** Channels asked for and not left since: while there are any, the socket is ref'd. */
  readonly #channels = new Set<string>();
  readonly #stopWatchingApp: (() => void)[] = [];

  constructor(conn: IoRedisLike, owned: boolean, sharded: boolean, app?: IoRedisLike) {
    this.#conn = conn;
    this.#owned = owned;
    this.#sharded = sharded;
    this.#app = owned ? app : undefined;
  }

  start(handlers: PubSubHandlers): void {
    const conn = this.#conn;
    this.#handlers = handlers;
    this.#wasReady = conn.status === 'ready';
    conn.on(this.#sharded ? 'smessage' : 'message', this.#onMessage);
    conn.on('ready', this.#onReady);
    // A Cluster's sharded subscribers re-subscribe after a topology change, then say so.
    conn.on('subscribersReady', this.#onResubscribed);
    // An owned connection has no other listener: an unhandled 'error' would crash the process.
    if (this.#owned) conn.on('error', this.#onError);
    // Every new socket starts ref'd: set it as the subscriptions want.
    if (this.#owned) conn.on('connect', this.#holdProcess);
    if (this.#app) this.#stopWatchingApp.push(onAppEvent(this.#app, 'end', this.#onAppEnd), onAppEvent(this.#app, 'ready', this.#onAppReady));
  }

  /** Ref the socket while a channel is subscribed (a waiter may count on it), unref it otherwise. */
  readonly #holdProcess = (): void => {
    // A standalone or Sentinel connection's socket is a net.Socket (a Cluster's has none: it ends with the application's).
    const socket = this.#owned ? (this.#conn.stream as Partial<Pick<Socket, 'ref' | 'unref'>> | undefined) : undefined;
    if (this.#channels.size > 0) socket?.ref?.();
    else socket?.unref?.();
  };

  /** The application's connection ended (quit, disconnect, retries given up): so does rlock's. */
  readonly #onAppEnd = (): void => {
    if (this.#conn.status !== 'end') this.#conn.disconnect();
  };

  /** The application's connection is back: so is rlock's if waiters listen (ioredis subscribes them again). */
  readonly #onAppReady = (): void => {
    if (this.#conn.status === 'end' && this.#channels.size > 0) this.#conn.connect().catch(() => undefined);
  };

  readonly #onMessage = (channel: string, message: string): void => this.#handlers?.message(channel, message);
  readonly #onError = (error: unknown): void => this.#handlers?.error(error);
  readonly #onResubscribed = (): void => this.#handlers?.resubscribed();

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
    if (this.#conn.isCluster !== true) await this.#conn.ping().catch(() => undefined);
    this.#onResubscribed();
  }

  async subscribe(channel: string): Promise<void> {
    const conn = this.#conn;
    this.#channels.add(channel);
    this.#holdProcess();
    try {
      if (this.#app && conn.status === 'end') this.#reopen(this.#app);
      // During the handshake ('connect') ioredis 5 writes SUBSCRIBE at once, ahead of its ready
      // check; that INFO then fails in subscriber mode, ioredis reconnects, and the subscription
      // is gone although SUBSCRIBE resolved (ioredis#2037). Before and after the handshake,
      // commands wait in the offline queue until the connection is ready.
      if (conn.status === 'connect') await (this.#readying ??= this.#ready().finally(() => (this.#readying = undefined)));
      await (this.#sharded ? conn.ssubscribe(channel) : conn.subscribe(channel));
    } catch (error) {
      this.#channels.delete(channel);
      this.#holdProcess();
      throw error;
    }
  }

  /** rlock's connection ended with the application's: connect it again, if the application's is open. */
  #reopen(app: IoRedisLike): void {
    if (app.status === 'end') throw new Error("rlock: the application's connection is closed");
    // ioredis subscribes the channels it had again, then says `ready` (waiters re-ask then).
    this.#conn.connect().catch(() => undefined);
  }

  /** Resolves once the connection is ready; rejects when the client gives up on it. */
  #ready(): Promise<void> {
    const conn = this.#conn;
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
    this.#channels.delete(channel);
    this.#holdProcess();
    await (this.#sharded ? this.#conn.sunsubscribe(channel) : this.#conn.unsubscribe(channel));
  }

  abandon(): void {
    if (this.#owned) this.#conn.disconnect();
  }

  async close(channels: readonly string[]): Promise<void> {
    const conn = this.#conn;
    conn.off(this.#sharded ? 'smessage' : 'message', this.#onMessage);
    conn.off('ready', this.#onReady);
    conn.off('subscribersReady', this.#onResubscribed);
    for (const stop of this.#stopWatchingApp.splice(0)) stop();
    if (this.#owned) {
      conn.off('connect', this.#holdProcess);
      // Never connected (lazy), or ended already: nothing to say goodbye to.
      if (conn.status === 'end') return;
      if (conn.status === 'wait') {
        conn.disconnect();
        return;
      }
      try {
        await conn.quit();
      } catch {
        conn.disconnect();
      }
    } else if (channels.length > 0) {
      const leave = this.#sharded ? channels.map((channel) => conn.sunsubscribe(channel)) : [conn.unsubscribe(...channels)];
      await Promise.all(leave).catch(() => undefined);
    }
  }
}
