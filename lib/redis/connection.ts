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
 * The application's Redis connection, from any supported client; rlock tells which by itself,
 * and never closes it.
 */
export type RedisConnection = IoRedisConnection | NodeRedisConnection;
