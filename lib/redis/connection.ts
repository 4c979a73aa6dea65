/**
 * An ioredis (5.9+ or 6.x) or iovalkey `Redis` (standalone or Sentinel-backed) or `Cluster`,
 * whichever copy the application has installed. Written out structurally: only these members
 * tell rlock what it was given.
 *
 * @example
 * import { Redis } from 'ioredis';
 * const locks = new LockClient(new Redis());   // or new Cluster([...]) / a Sentinel Redis
 */
export interface IoRedisConnection {
  /** Defines rlock's Lua scripts as commands. */
  defineCommand(...args: never[]): unknown;
  /** A new connection with the same options: rlock's default pub/sub connection. */
  duplicate(...args: never[]): unknown;
  /** The client's connection status. */
  readonly status: string;
}

/**
 * A node-redis (`redis` / `@redis/client` 6.x) `createClient()`, `createCluster()` or
 * `createSentinel()`, connected by the application (`await client.connect()`), RESP2 or RESP3.
 *
 * @example
 * import { createClient } from 'redis';
 * const redis = await createClient().connect();
 * const locks = new LockClient(redis);
 */
export interface NodeRedisConnection {
  /** Sends rlock's commands and scripts. */
  sendCommand(...args: never[]): Promise<unknown>;
  /** MULTI/EXEC. */
  multi(...args: never[]): unknown;
  /** A new connection with the same options: rlock's default pub/sub connection. */
  duplicate(...args: never[]): unknown;
  /** Whether the application connected it. */
  readonly isOpen: boolean;
}

/**
 * A Valkey GLIDE (`@valkey/valkey-glide` 2.3+) `GlideClient` or `GlideClusterClient`, as
 * `createClient()` resolved it. GLIDE has no key prefix. rlock opens its own pub/sub client from
 * this one's settings, or uses the `subscriber` option: a client of the same kind made without a
 * `pubsubSubscriptions` callback.
 *
 * @example
 * import { GlideClient } from '@valkey/valkey-glide';
 * const glide = await GlideClient.createClient({ addresses: [{ host: 'localhost', port: 6379 }] });
 * const locks = new LockClient(glide);
 */
export interface GlideConnection {
  /** Sends rlock's commands and scripts. */
  customCommand(...args: never[]): Promise<unknown>;
  /** GLIDE's script call (rlock sends EVAL through customCommand instead). */
  invokeScript(...args: never[]): unknown;
  /** GLIDE's pub/sub message queue. */
  getPubSubMessage(...args: never[]): Promise<unknown>;
}

/**
 * The application's Redis connection, from any supported client; rlock tells which by itself,
 * and never closes it.
 */
export type RedisConnection = IoRedisConnection | NodeRedisConnection | GlideConnection;
