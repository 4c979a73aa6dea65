/**
 * What rlock needs of a Redis connection, whatever client it comes from. One adapter per client
 * family implements it (ioredis-adapter.ts for ioredis and iovalkey, node-redis-adapter.ts for
 * node-redis, glide-adapter.ts for Valkey GLIDE); nothing above this file knows which client it runs on.
 */

/** A command argument: numbers are sent as their decimal text. */
export type Arg = string | number;

/** The client families rlock accepts. */
export type ClientFamily = 'ioredis' | 'iovalkey' | 'node-redis' | 'glide';

/** What the application handed rlock: one server (maybe found through Sentinel), or a Cluster. */
export type Deployment = 'standalone' | 'sentinel' | 'cluster';

/** One Lua script: a name from a hash of its text, its key count (undefined: the first argument gives it), its text. */
export interface LuaScript {
  readonly name: string;
  readonly numberOfKeys: number | undefined;
  readonly lua: string;
}

/** `syncReplicas`: how many replicas must confirm a write, and how long to wait for them. */
export interface ReplicaAck {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** One master of the deployment, for what is asked of every server (INFO, SCAN). */
export interface ServerNode {
  /** `host:port` (or the socket path). */
  readonly address: string;
  /** One command on this server. */
  command(args: readonly Arg[]): Promise<unknown>;
}

/** What a pub/sub connection tells rlock. */
export interface PubSubHandlers {
  /** A message arrived on a subscribed channel. */
  message(channel: string, message: string): void;
  /** The subscriptions are live again after a reconnect or a topology change: notices may have been missed. */
  resubscribed(): void;
  /** The connection failed (rlock's own connection only: the application listens to its own). */
  error(error: unknown): void;
}

/** rlock's pub/sub connection (its own duplicate, or the application's `subscriber`). */
export interface PubSubPort {
  /** Starts listening; called once, before the first subscribe. */
  start(handlers: PubSubHandlers): void;
  /** Resolves once Redis confirmed the subscription. */
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  /** Removes rlock's listeners; closes the connection if rlock opened it, else leaves `channels`. */
  close(channels: readonly string[]): Promise<void>;
  /** close() got no answer in time: cuts rlock's own connection at once; leaves the application's as it is. */
  abandon(): void;
}

/** What rlock knows of a connection, fixed when its adapter is made: the adapters' common base. */
export abstract class ConnectionFacts {
  readonly family: ClientFamily;
  readonly deployment: Deployment;
  /** The application's own connection object (identity checks: two locks on one connection). */
  readonly connection: object;
  /** The client's own key prefix ('' if none): added to declared keys, not to channels or ARGV. */
  readonly keyPrefix: string;
  /** Where a connection to one given server points (`host:port`, `unix:path`); undefined for a Cluster or Sentinel. */
  readonly address: string | undefined;
  /** The database number selected (0 on a Cluster). */
  readonly db: number;
  /** Whether the client can keep sharded subscriptions on a Cluster (SSUBSCRIBE per shard). */
  readonly shardedPubSub: boolean;

  protected constructor(facts: ConnectionFacts) {
    this.family = facts.family;
    this.deployment = facts.deployment;
    this.connection = facts.connection;
    this.keyPrefix = facts.keyPrefix;
    this.address = facts.address;
    this.db = facts.db;
    this.shardedPubSub = facts.shardedPubSub;
  }
}

/**
 * A connection as rlock uses it. Keys are given without the client's own prefix: a client that
 * has one (ioredis `keyPrefix`) adds it to declared keys itself.
 */
export interface RedisPort extends ConnectionFacts {
  /** How long the client waits for an answer before it gives up on a call (GLIDE's `requestTimeout`); undefined: no limit. */
  readonly replyTimeoutMs?: number;
  /**
   * Runs a script: `args` are its keys (`script.numberOfKeys` of them, or as many as `args[0]`
   * says), then its arguments. Sent by SHA where the server has it, by text otherwise, in the
   * order the calls were made.
   */
  runScript(script: LuaScript, args: readonly Arg[]): Promise<unknown>;
  /** A script, then WAIT for replica acks on the same node, in one round trip: [script reply, acks]. */
  runScriptThenWait(script: LuaScript, args: readonly Arg[], ack: ReplicaAck): Promise<[unknown, number]>;
  /** One command; `key` (given unprefixed) routes it on a Cluster and is not otherwise added. */
  command(args: readonly Arg[], key?: string): Promise<unknown>;
  /** How many replicas confirmed the writes made so far on the node holding `key` (WAIT). */
  waitForReplicas(key: string, ack: ReplicaAck): Promise<number>;
  /** Every master (one for a standalone or Sentinel connection). */
  masters(): Promise<ServerNode[]>;
  /** The master that serves `slot` (`host:port`), if known: Cluster only. */
  slotOwner(slot: number): string | undefined;
  /** A new pub/sub connection of rlock's own, like this one (sharded: one per Cluster shard). */
  openPubSub(sharded: boolean): PubSubPort;
}
