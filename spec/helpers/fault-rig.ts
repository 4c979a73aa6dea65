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
  /**
   * A rig of one test's own, for tests that run at once (`it.concurrent`): a fault proxy of its
   * own in front of the file's server, a prefix of its own, its connections and clients closed
   * by `close()` (give it to the test's `onTestFinished`).
   */
  own(): Promise<OwnFaultRig>;
}

/** One test's own proxy and prefix (FaultRig.own). */
export type OwnFaultRig = Omit<FaultRig, 'own'> & { close(): Promise<void> };

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
  type Cleanups = (() => Promise<void> | void)[];
  /** connect, lockConnect, client and key, through `proxyOf()`, under `prefixOf()`, closed by `cleanupList`. */
  const tools = (proxyOf: () => FaultProxy, prefixOf: () => string, cleanupList: Cleanups): Pick<FaultRig, 'key' | 'connect' | 'lockConnect' | 'client'> => {
    const connect = (via: 'proxy' | 'direct', options: RedisOptions = {}): Redis => {
      const url = via === 'proxy' ? proxyOf().url : started(server).url;
      const conn = new Redis(url, options);
      conn.on('error', () => undefined);
      cleanupList.push(() => conn.disconnect());
      return conn;
    };
    const lockConnect = (via: 'proxy' | 'direct', options: ConnectionOptions = {}): RedisConnection => {
      const url = via === 'proxy' ? proxyOf().url : started(server).url;
      const { connection, close } = connectStandalone(url, options);
      cleanupList.push(close);
      return connection;
    };
    return {
      key: (name) => `{${prefixOf()}:${name}}`,
      connect,
      lockConnect,
      client: (redis, options = {}) => {
        const subscriber = isIoRedis(redis) ? connect('direct') : lockConnect('direct');
        const locks = new LockClient(redis, { keyPrefix: prefixOf(), subscriber, ...options });
        locks.on('error', () => undefined);
        cleanupList.push(() => locks.close());
        return locks;
      },
    };
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
    ...tools(() => started(proxy), () => prefix, cleanups),
    own: async () => {
      const ownProxy = await startFaultProxy(started(server).port);
      const ownPrefix = `flt-${randomUUID().slice(0, 8)}`;
      const ownCleanups: Cleanups = [];
      return {
        server: started(server),
        proxy: ownProxy,
        admin: started(admin),
        prefix: ownPrefix,
        ...tools(() => ownProxy, () => ownPrefix, ownCleanups),
        close: async () => {
          ownProxy.heal();
          for (const cleanup of ownCleanups.reverse()) await cleanup();
          await ownProxy.close();
        },
      };
    },
  };
}
