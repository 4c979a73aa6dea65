import { ConnectionFacts, type Arg, type LuaScript, type PubSubHandlers, type PubSubPort, type RedisPort, type ReplicaAck, type ServerNode } from './port.js';

/** The members of an ioredis (or iovalkey) `Redis` or `Cluster` this adapter uses. */
export interface IoRedisLike {
  readonly options: { keyPrefix?: string; host?: string; port?: number; path?: string; db?: number; sentinels?: unknown; shardedSubscribers?: boolean };
  readonly status: string;
  readonly isCluster?: boolean;
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

  constructor(conn: IoRedisLike) {
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
    const fn = (this.#conn as unknown as Record<string, ScriptCall>)[this.#script(script)]!;
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
    const conn = this.deployment === 'cluster' ? this.#conn.duplicate([], { shardedSubscribers: sharded }) : this.#conn.duplicate();
    return new IoRedisPubSub(conn, true, sharded);
  }
}

/**
 * A pub/sub connection of ioredis or iovalkey. The client re-subscribes by itself after a
 * reconnect or a topology change; rlock is told when the subscriptions are live again.
 */
export class IoRedisPubSub implements PubSubPort {
  readonly #conn: IoRedisLike;
  readonly #owned: boolean;
  readonly #sharded: boolean;
  #handlers: PubSubHandlers | undefined;
  #wasReady = false;
  /** One wait for the handshake, shared by every subscribe that comes during it. */
  #readying: Promise<void> | undefined;

  constructor(conn: IoRedisLike, owned: boolean, sharded: boolean) {
    this.#conn = conn;
    this.#owned = owned;
    this.#sharded = sharded;
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
  }

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
    // During the handshake ('connect') ioredis 5 writes SUBSCRIBE at once, ahead of its ready
    // check; that INFO then fails in subscriber mode, ioredis reconnects, and the subscription
    // is gone although SUBSCRIBE resolved (ioredis#2037). Before and after the handshake,
    // commands wait in the offline queue until the connection is ready.
    if (conn.status === 'connect') await (this.#readying ??= this.#ready().finally(() => (this.#readying = undefined)));
    await (this.#sharded ? conn.ssubscribe(channel) : conn.subscribe(channel));
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
    await (this.#sharded ? this.#conn.sunsubscribe(channel) : this.#conn.unsubscribe(channel));
  }

  async close(channels: readonly string[]): Promise<void> {
    const conn = this.#conn;
    conn.off(this.#sharded ? 'smessage' : 'message', this.#onMessage);
    conn.off('ready', this.#onReady);
    conn.off('subscribersReady', this.#onResubscribed);
    if (this.#owned) {
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
