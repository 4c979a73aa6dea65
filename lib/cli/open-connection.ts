import type { RedisConnection } from '../redis/connection.js';
import type { Target } from './connect.js';

/** A connection the CLI opened, and how to let it go. */
export interface OpenConnection {
  readonly connection: RedisConnection;
  close(): void;
}

/** Loads a package if the installation has it. */
async function load<T>(name: string): Promise<T | undefined> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

interface IoRedisModule {
  Redis: new (options: object) => IoRedisClient;
  Cluster: new (seeds: object[], options: object) => IoRedisClient;
}
interface IoRedisClient {
  connect(): Promise<void>;
  disconnect(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

interface NodeRedisModule {
  createClient(options: object): NodeRedisClient;
  createCluster(options: object): NodeRedisClient;
  createSentinel(options: object): NodeRedisClient;
}
interface NodeRedisClient {
  connect(): Promise<unknown>;
  destroy(): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Fails fast: a CLI must not retry forever. */
const FAIL_FAST = {
  lazyConnect: true,
  connectTimeout: 5_000,
  maxRetriesPerRequest: 1,
  retryStrategy: () => null,
  sentinelRetryStrategy: () => null,
  enableOfflineQueue: true,
};

/**
 * Connects; on failure lets the connection go and rejects with why. A client's connect() often
 * rejects with a bare "Connection is closed." while its 'error' event says why.
 */
async function connectOrExplain(conn: { connect(): Promise<unknown>; on(event: 'error', listener: (error: Error) => void): unknown }, release: () => void): Promise<void> {
  let lastError: Error | undefined;
  conn.on('error', (error: Error) => (lastError = error));
  try {
    await conn.connect();
  } catch (error) {
    release();
    throw new Error(lastError?.message ?? (error instanceof Error ? error.message : String(error)));
  }
}

async function openIoRedis(lib: IoRedisModule, target: Target): Promise<OpenConnection> {
  const connection =
    target.kind === 'cluster'
      ? new lib.Cluster([...target.seeds], {
          lazyConnect: true,
          clusterRetryStrategy: () => null,
          redisOptions: { ...target.options, connectTimeout: 5_000, maxRetriesPerRequest: 1 },
        })
      : new lib.Redis({ ...FAIL_FAST, ...target.options });
  await connectOrExplain(connection, () => connection.disconnect());
  return { connection: connection as unknown as RedisConnection, close: () => connection.disconnect() };
}

async function openNodeRedis(lib: NodeRedisModule, target: Target): Promise<OpenConnection> {
  const { username, password, tls, db } = target.options;
  const auth = { ...(username ? { username } : {}), ...(password ? { password } : {}) };
  // Give up at the first failure, as the other clients do here.
  const socket = (host: string, port: number): object => ({ host, port, connectTimeout: 5_000, reconnectStrategy: false, ...(tls ? { tls: true } : {}) });
  let client: NodeRedisClient;
  if (target.kind === 'cluster') {
    client = lib.createCluster({ rootNodes: target.seeds.map(({ host, port }) => ({ socket: socket(host, port) })), defaults: auth });
  } else if (target.kind === 'sentinel') {
    const { sentinels = [], name, sentinelPassword } = target.options;
    client = lib.createSentinel({
      name,
      sentinelRootNodes: sentinels,
      nodeClientOptions: { ...auth, ...(db === undefined ? {} : { database: db }), socket: { connectTimeout: 5_000, reconnectStrategy: false } },
      ...(sentinelPassword ? { sentinelClientOptions: { password: sentinelPassword } } : {}),
    });
  } else {
    const { host = '127.0.0.1', port = 6379 } = target.options;
    client = lib.createClient({ ...auth, ...(db === undefined ? {} : { database: db }), socket: socket(host, port) });
  }
  await connectOrExplain(client, () => void client.destroy());
  return { connection: client as unknown as RedisConnection, close: () => void client.destroy() };
}

/**
 * Connects to `target` with whichever supported client the installation has: ioredis, then
 * iovalkey, then node-redis (`redis` or `@redis/client`). Rejects (a connection error: exit
 * code 3) with the cause when it cannot.
 */
export async function openConnection(target: Target): Promise<OpenConnection> {
  for (const name of ['ioredis', 'iovalkey']) {
    const lib = await load<IoRedisModule>(name);
    if (lib) return openIoRedis(lib, target);
  }
  for (const name of ['redis', '@redis/client']) {
    const lib = await load<NodeRedisModule>(name);
    if (lib) return openNodeRedis(lib, target);
  }
  throw new Error('no Redis client is installed: install ioredis, iovalkey or redis beside rlock');
}
