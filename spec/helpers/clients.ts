import { Cluster as IoCluster, Redis as IoRedis, type RedisOptions } from 'ioredis';
import { Cluster as ValkeyCluster, Redis as ValkeyRedis } from 'iovalkey';
import { createClient, createCluster, createSentinel } from 'redis';
import type { RedisConnection } from '../../lib/index.js';

/**
 * The client family the suite runs on: `RLOCK_TEST_CLIENT` = ioredis (default), iovalkey,
 * node-redis (RESP2), node-redis-resp3 or glide (Valkey GLIDE). Every connection a LockClient under test uses comes
 * from here; connections the specs use to look at Redis stay on ioredis.
 */
export type TestClient = 'ioredis' | 'iovalkey' | 'node-redis' | 'node-redis-resp3' | 'glide';

const CLIENTS: readonly TestClient[] = ['ioredis', 'iovalkey', 'node-redis', 'node-redis-resp3', 'glide'];

function testClient(): TestClient {
  const name = process.env.RLOCK_TEST_CLIENT ?? 'ioredis';
  if (!(CLIENTS as readonly string[]).includes(name)) throw new Error(`RLOCK_TEST_CLIENT must be one of ${CLIENTS.join(', ')}, got "${name}"`);
  return name as TestClient;
}

export const TEST_CLIENT: TestClient = testClient();

/** True when the suite runs on node-redis (either protocol). */
export const ON_NODE_REDIS = TEST_CLIENT.startsWith('node-redis');

/** True when the suite runs on Valkey GLIDE: no key prefix, no Sentinel. */
export const ON_GLIDE = TEST_CLIENT === 'glide';

// GLIDE (a native module) is loaded only for the runs that use it.
let glide: typeof import('./glide-clients.js') | undefined = ON_GLIDE ? await import('./glide-clients.js') : undefined;

/** Loads GLIDE for a spec that makes GLIDE connections while the suite runs on another family (in beforeAll). */
export async function loadGlide(): Promise<void> {
  glide ??= await import('./glide-clients.js');
}

function glideClients(options: ConnectionOptions): typeof import('./glide-clients.js') {
  if (glide === undefined) throw new Error('GLIDE is not loaded: call loadGlide() in beforeAll');
  // Specs of the client's own key prefix are not for GLIDE, which has none.
  if (options.keyPrefix) throw new Error('GLIDE has no key prefix');
  return glide;
}

/** A connection for a LockClient, and how to let it go. */
export interface LockConnection {
  readonly connection: RedisConnection;
  readonly close: () => Promise<void>;
}

/** What every family understands; anything family-specific goes in `ioredis` (ioredis and iovalkey only). */
export interface ConnectionOptions {
  /** The client's own key prefix (node-redis 6 has one too). */
  readonly keyPrefix?: string;
  /** Reconnect after this many ms (default 100): specs restart servers. */
  readonly reconnectMs?: number;
  /** More options for ioredis and iovalkey. */
  readonly ioredis?: RedisOptions;
  /** More settings for a standalone GLIDE client. */
  readonly glide?: Record<string, unknown>;
}

const quiet = <T extends { on(event: 'error', listener: () => void): unknown }>(conn: T): T => {
  conn.on('error', () => undefined);
  return conn;
};

function nodeRedisBase(options: ConnectionOptions): { RESP: 2 | 3; keyPrefix?: string } {
  return { RESP: TEST_CLIENT === 'node-redis-resp3' ? 3 : 2, ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}) };
}

/** A node-redis object connected in the background (open at once: commands queue until it is ready). */
function opened(conn: { connect(): Promise<unknown>; destroy(): unknown; on(event: 'error', listener: () => void): unknown }): LockConnection {
  quiet(conn);
  void conn.connect().catch(() => undefined);
  return { connection: conn as unknown as RedisConnection, close: () => Promise.resolve(void conn.destroy()) };
}

/** PING on a connection of any family: resolves once the connection answers. */
export async function ping(connection: RedisConnection): Promise<void> {
  const conn = connection as unknown as { ping?: () => Promise<unknown>; sendCommand: (args: string[]) => Promise<unknown>; customCommand?: (args: string[]) => Promise<unknown> };
  if (typeof conn.customCommand === 'function') await conn.customCommand(['PING']);
  else await (typeof (connection as { defineCommand?: unknown }).defineCommand === 'function' ? conn.ping!() : conn.sendCommand(['PING']));
}

/** A connection to one server (`redis://host:port`) from the family under test. */
export function connectStandalone(url: string, options: ConnectionOptions = {}, client: TestClient = TEST_CLIENT): LockConnection {
  const reconnectMs = options.reconnectMs ?? 100;
  if (client === 'ioredis' || client === 'iovalkey') {
    const Ctor = client === 'ioredis' ? IoRedis : ValkeyRedis;
    const conn = quiet(new Ctor(url, { retryStrategy: () => reconnectMs, ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}), ...options.ioredis }));
    return { connection: conn, close: () => Promise.resolve(conn.disconnect()) };
  }
  if (client === 'glide') {
    const { client: conn, close } = glideClients(options).glideStandalone(url, reconnectMs, options.glide);
    return { connection: conn, close };
  }
  return opened(createClient({ url, ...nodeRedisBase(options), socket: { reconnectStrategy: () => reconnectMs } }));
}

/** A connection to a Cluster from the family under test. */
export function connectCluster(seeds: readonly { host: string; port: number }[], options: ConnectionOptions = {}, client: TestClient = TEST_CLIENT): LockConnection {
  const reconnectMs = options.reconnectMs ?? 100;
  if (client === 'ioredis' || client === 'iovalkey') {
    const clusterOptions = {
      clusterRetryStrategy: () => reconnectMs,
      ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
      ...(options.ioredis ? { redisOptions: options.ioredis } : {}),
    };
    const conn = quiet(client === 'ioredis' ? new IoCluster([...seeds], clusterOptions) : new ValkeyCluster([...seeds], clusterOptions as object));
    return { connection: conn, close: () => Promise.resolve(conn.disconnect()) };
  }
  if (client === 'glide') {
    const { client: conn, close } = glideClients(options).glideCluster(seeds, reconnectMs);
    return { connection: conn, close };
  }
  return opened(
    createCluster({
      rootNodes: seeds.map(({ host, port }) => ({ socket: { host, port } })),
      defaults: { ...nodeRedisBase(options), socket: { reconnectStrategy: () => reconnectMs } },
      ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
    }),
  );
}

/** A Sentinel-backed connection from the family under test. */
export function connectSentinel(
  sentinels: readonly { host: string; port: number }[],
  name: string,
  options: ConnectionOptions = {},
  client: TestClient = TEST_CLIENT,
): LockConnection {
  const reconnectMs = options.reconnectMs ?? 100;
  if (client === 'ioredis' || client === 'iovalkey') {
    const Ctor = client === 'ioredis' ? IoRedis : ValkeyRedis;
    const conn = quiet(new Ctor({ sentinels: [...sentinels], name, retryStrategy: () => reconnectMs, ...options.ioredis }));
    return { connection: conn, close: () => Promise.resolve(conn.disconnect()) };
  }
  if (client === 'glide') throw new Error('GLIDE has no Sentinel support');
  return opened(
    createSentinel({
      name,
      sentinelRootNodes: [...sentinels],
      nodeClientOptions: { ...nodeRedisBase(options), socket: { reconnectStrategy: () => reconnectMs } },
      ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
    }),
  );
}
