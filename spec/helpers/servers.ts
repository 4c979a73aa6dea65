import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { LockClient, type LockClientOptions, type RedisConnection } from '../../lib/index.js';
import { connectStandalone } from './clients.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';

/** Independent redis-servers of one test file (RedLock nodes), and what a test opens on them. */
export interface Servers {
  /** The spawned servers (valid inside tests). */
  readonly list: readonly SpawnedRedis[];
  /** A new connection to `server`, closed after the test. */
  connect(server: SpawnedRedis, options?: RedisOptions): Redis;
  /** One LockClient per server, each on its own connection (ioredis with `redisOptions`, else the family under test); closed after the test. */
  clients(options?: LockClientOptions, redisOptions?: RedisOptions): LockClient[];
  /** Closes `thing` after the test. */
  track(thing: { close(): Promise<void> }): void;
}

/** Spawns `count` servers before the file's tests and stops them after; closes what each test opened. */
export function useServers(count: number): Servers {
  let list: SpawnedRedis[] = [];
  const opened: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    list = await Promise.all(Array.from({ length: count }, () => spawnRedis()));
  });
  afterAll(async () => {
    await Promise.all(list.map((server) => server.stop()));
  });
  afterEach(async () => {
    for (const thing of opened.reverse()) await thing.close().catch(() => undefined);
    opened.length = 0;
  });

  const connect = (server: SpawnedRedis, options: RedisOptions = {}): Redis => {
    const conn = new Redis(server.url, options);
    conn.on('error', () => undefined);
    opened.push({ close: () => Promise.resolve(conn.disconnect()) });
    return conn;
  };
  const lockConnection = (server: SpawnedRedis): RedisConnection => {
    const { connection, close } = connectStandalone(server.url);
    opened.push({ close });
    return connection;
  };
  return {
    get list() {
      return list;
    },
    connect,
    track: (thing) => void opened.push(thing),
    clients: (options = {}, redisOptions) =>
      list.map((server) => {
        // Without ioredis options, on the client family under test (clients.ts).
        const connection = redisOptions ? connect(server, redisOptions) : lockConnection(server);
        const client = new LockClient(connection, options);
        opened.push(client);
        return client;
      }),
  };
}
