import { Redis, type RedisOptions } from 'ioredis';
import { afterEach } from 'vitest';
import { LockClient, type LockClientOptions } from '../../lib/index.js';
import { connectSentinel } from './clients.js';
import { spawnSentinelSet, type SpawnedSentinelSet } from '../../tools/redis-sentinel.js';

/** What a Sentinel spec gets from `useSentinelRig`; everything it makes is closed after each test. */
export interface SentinelRig {
  /** A master + replica + 3 Sentinels of its own: failover changes who is master. */
  readonly setUp: () => Promise<SpawnedSentinelSet>;
  /** A LockClient (keyPrefix 's') on a Sentinel-backed connection to `set`. */
  readonly client: (set: SpawnedSentinelSet, options?: LockClientOptions, redisOptions?: RedisOptions) => LockClient;
  /** A plain connection to one server of the set, to look at what it holds. */
  readonly direct: (port: number) => Redis;
}

export function useSentinelRig(): SentinelRig {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
  });
  return {
    setUp: async () => {
      const set = await spawnSentinelSet();
      cleanups.push(() => set.stop());
      return set;
    },
    client: (set, options = {}, redisOptions = {}) => {
      const { connection, close } = connectSentinel(set.sentinelNodes, set.name, { ioredis: redisOptions });
      const locks = new LockClient(connection, { keyPrefix: 's', ...options });
      locks.on('error', () => undefined);
      cleanups.push(async () => {
        await locks.close();
        await close();
      });
      return locks;
    },
    direct: (port) => {
      const conn = new Redis({ port, host: '127.0.0.1' });
      conn.on('error', () => undefined);
      cleanups.push(() => Promise.resolve(conn.disconnect()));
      return conn;
    },
  };
}
