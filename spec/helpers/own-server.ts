import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { LockClient, type LockClientOptions } from '../../lib/index.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';

/** A redis-server of one test file's own: command counts need a server nobody else talks to. */
export interface OwnServer {
  /** The spawned server (valid inside tests). */
  readonly server: SpawnedRedis;
  /** A connection for looking at the server (valid inside tests). */
  readonly admin: Redis;
  /** A new LockClient on its own connection with `defaults` (and `options`); closed after the file. */
  readonly client: (options?: LockClientOptions) => LockClient;
}

/** Spawns a server before the file's tests and stops it, and every client made, after them. */
export function useOwnServer(defaults: LockClientOptions): OwnServer {
  let server: SpawnedRedis | undefined;
  let admin: Redis | undefined;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await spawnRedis();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    admin?.disconnect();
    await server?.stop();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useOwnServer: only usable inside tests');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get admin() {
      return started(admin);
    },
    client: (options = {}) => {
      const redis = new Redis(started(server).url);
      const locks = new LockClient(redis, { ...defaults, ...options });
      closers.push(async () => {
        await locks.close();
        redis.disconnect();
      });
      return locks;
    },
  };
}
