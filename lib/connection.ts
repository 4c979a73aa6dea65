/**
 * What rlock needs of a Redis connection, written out structurally so that any ioredis 5.x
 * (from 5.9) or 6.x `Redis` (standalone or Sentinel-backed) or `Cluster` fits it, whichever
 * copy of ioredis the application has installed. Only the members below are used; rlock never
 * closes the connection it is given.
 *
 * @example
 * import { Redis } from 'ioredis';
 * const locks = new LockClient(new Redis());   // or new Cluster([...]) / a Sentinel Redis
 */
export interface RedisConnection {
  /**
   * The connection's options. rlock reads `keyPrefix` (it applies to every key and channel
   * rlock uses) and, to tell servers apart, the address fields (`host`, `port`, `path`, `db`,
   * `sentinels`).
   */
  readonly options: {
    /** ioredis' own key prefix, applied to every key (and channel) rlock uses. */
    readonly keyPrefix?: string | undefined;
  };
  /** ioredis' connection status (`'ready'`, `'connect'`, `'end'`, …). */
  readonly status: string;
  /** True for an ioredis `Cluster`. */
  readonly isCluster: boolean;
  /** Defines rlock's Lua scripts as commands (EVALSHA with an EVAL fallback). */
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  /** A new connection with the same options: rlock's default pub/sub connection. */
  duplicate(...args: never[]): RedisConnection;
  /** A command pipeline (used for WAIT after a renewal with `syncReplicas`). */
  pipeline(...args: never[]): unknown;
  /** EXISTS: whether a lock key is there (`isLocked`). */
  exists(...args: never[]): Promise<number>;
  /** HGET: a hold count or a fencing token. */
  hget(key: string, field: string): Promise<string | null>;
  /** PTTL: a lock's remaining time to live. */
  pttl(key: string): Promise<number>;
  /** ZREM: a client leaving a lock's set of waiting clients. */
  zrem(...args: never[]): Promise<number>;
  /** Used on a Cluster, to learn the server version. */
  info(...args: never[]): Promise<string>;
  /** Wake-up notices, on the pub/sub connection (classic pub/sub). */
  subscribe(...args: never[]): Promise<unknown>;
  /** Wake-up notices no longer needed (classic pub/sub). */
  unsubscribe(...args: never[]): Promise<unknown>;
  /** Wake-up notices, on a Redis 7 Cluster (sharded pub/sub). */
  ssubscribe(...args: never[]): Promise<unknown>;
  /** Wake-up notices no longer needed (sharded pub/sub). */
  sunsubscribe(...args: never[]): Promise<unknown>;
  /** Closes the pub/sub connection rlock made itself (`close()`). */
  quit(...args: never[]): Promise<unknown>;
  /** Closes the pub/sub connection rlock made itself, when QUIT cannot be sent. */
  disconnect(...args: never[]): void;
  /** rlock listens to `close` (main connection), `ready`, `message`/`smessage`, `error` (pub/sub). */
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  /** Waits for `ready` or `end` of the pub/sub connection. */
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  /** Removes rlock's listeners (`close()`). */
  off(event: string, listener: (...args: unknown[]) => void): unknown;
}
