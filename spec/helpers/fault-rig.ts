import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { LockClient, type LockClientOptions, type RedisConnection } from '../../lib/index.js';
import { connectStandalone, type ConnectionOptions } from './clients.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';
import { startFaultProxy, type FaultProxy } from '../../tools/fault-proxy.js';

/** A fault-injection file's own redis-server with a fault proxy in front of it. */
export interface FaultRig {
  readonly server: SpawnedRedis;
  readonly proxy: FaultProxy;
  /** A direct connection for looking at the server. */
  readonly admin: Redis;
  /** Unique per test: the keyPrefix of every client made with `client()`. */
  readonly prefix: string;
  /** The key of lock `name` (also the hash of a read-write lock). */
  key(name: string): string;
  /** A new connection through the proxy or straight to Redis; ready once `ping()` answers. Closed after the test. */
  connect(via: 'proxy' | 'direct', options?: RedisOptions): Redis;
  /** A new connection from the client family under test (clients.ts), through the proxy or straight to Redis; closed after the test. */
  lockConnect(via: 'proxy' | 'direct', options?: ConnectionOptions): RedisConnection;
  /**
   * A LockClient on `redis` with this test's prefix. Its pub/sub connection is direct (of the
   * same client family) unless `options.subscriber` says otherwise, so only the connection under
   * test crosses the proxy.
   */
  client(redis: RedisConnection, options?: LockClientOptions): LockClient;
}

export function useFaultRig(): FaultRig {
  let server: SpawnedRedis | undefined;
  let proxy: FaultProxy | undefined;
  let admin: Redis | undefined;
  let prefix = '';
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    server = await spawnRedis();
    proxy = await startFaultProxy(server.port);
    admin = new Redis(server.url);
  });
  beforeEach(() => {
    prefix = `flt-${randomUUID().slice(0, 8)}`;
  });
  afterEach(async () => {
    proxy?.heal();
    proxy?.latency({});
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups.length = 0;
    proxy?.resetAll();
  });
  afterAll(async () => {
    admin?.disconnect();
    await proxy?.close();
    await server?.stop();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useFaultRig: only usable inside tests');
    return value;
  };
  const connect = (via: 'proxy' | 'direct', options: RedisOptions = {}): Redis => {
    const url = via === 'proxy' ? started(proxy).url : started(server).url;
    const conn = new Redis(url, options);
    conn.on('error', () => undefined);
    cleanups.push(() => conn.disconnect());
    return conn;
  };

  const lockConnect = (via: 'proxy' | 'direct', options: ConnectionOptions = {}): RedisConnection => {
    const url = via === 'proxy' ? started(proxy).url : started(server).url;
    const { connection, close } = connectStandalone(url, options);
    cleanups.push(close);
    return connection;
  };
  /** The family of `redis`: a subscriber must come from the same client. */
  const isIoRedis = (redis: RedisConnection): boolean => typeof (redis as { defineCommand?: unknown }).defineCommand === 'function';

  return {
    get server() {
      return started(server);
    },
    get proxy() {
      return started(proxy);
    },
    get admin() {
      return started(admin);
    },
    get prefix() {
      return prefix;
    },
    key: (name) => `{${prefix}:${name}}`,
    connect,
    lockConnect,
    client: (redis, options = {}) => {
      const subscriber = isIoRedis(redis) ? connect('direct') : lockConnect('direct');
      const locks = new LockClient(redis, { keyPrefix: prefix, subscriber, ...options });
      locks.on('error', () => undefined);
      cleanups.push(() => locks.close());
      return locks;
    },
  };
}
