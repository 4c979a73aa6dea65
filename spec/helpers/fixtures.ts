import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { afterEach, beforeEach, inject } from 'vitest';
import { LockClient, type LockClientOptions, type RedisConnection } from '../../lib/index.js';
import { connectStandalone, type ConnectionOptions } from './clients.js';

/** Something to close after each test, in reverse order of creation. */
interface Closable {
  close(): Promise<void>;
}

export interface LockFixture {
  /** Unique per test: every key the test writes starts with it. */
  readonly prefix: string;
  /** The shared test server's URL. */
  readonly url: string;
  /** A new connection to `url` (or `urlOverride`), closed after the test. */
  redis(options?: RedisOptions, urlOverride?: string): Redis;
  /**
   * A new LockClient with this test's prefix, on `connection` or else on a connection of its own
   * from the client family under test (see clients.ts); closed after the test.
   */
  client(options?: LockClientOptions, connection?: RedisConnection): LockClient;
  /** A new connection to `url` from the client family under test, closed after the test. */
  lockConnection(options?: ConnectionOptions): RedisConnection;
  /**
   * Every key under this test's prefix (SCAN, never KEYS/FLUSHALL on a shared server), except the
   * short-lived records that answer resent calls (see `records`) and the clients' process
   * identities (`{<prefix>:}:client:<id>`, spec/inspect/process-identity.spec.ts checks them).
   */
  keys(connection?: Redis): Promise<string[]>;
  /** The records of final releases and forceUnlocks under this test's prefix, with their PTTLs. */
  records(connection?: Redis): Promise<{ key: string; ttlMs: number }[]>;
  /** Registers anything with close() for cleanup. */
  track<T extends Closable>(thing: T): T;
}

/** This worker's shared test server (global-setup.ts spawns one per worker). */
export function sharedRedisUrl(): string {
  const urls = inject('redisUrls');
  return urls[(Number(process.env.VITEST_POOL_ID ?? 1) - 1) % urls.length] ?? urls[0]!;
}

export function useLockFixture(): LockFixture {
  const url = sharedRedisUrl();
  const created: Closable[] = [];
  let prefix = '';
  let admin: Redis | undefined;

  beforeEach(() => {
    prefix = `rlt-${randomUUID().slice(0, 8)}`;
  });
  afterEach(async () => {
    for (const thing of created.reverse()) await thing.close().catch(() => undefined);
    created.length = 0;
  });

  const scanAll = async (connection?: Redis): Promise<string[]> => {
    admin ??= new Redis(url);
    const conn = connection ?? admin;
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await conn.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
    return found;
  };

  const track = <T extends Closable>(thing: T): T => {
    created.push(thing);
    return thing;
  };
  const redis = (options: RedisOptions = {}, urlOverride?: string): Redis => {
    const conn = new Redis(urlOverride ?? url, options);
    conn.on('error', () => undefined);
    track({ close: () => Promise.resolve(conn.disconnect()) });
    return conn;
  };

  const lockConnection = (options: ConnectionOptions = {}): RedisConnection => track(connectStandalone(url, options)).connection;

  return {
    get prefix() {
      return prefix;
    },
    url,
    redis,
    client: (options = {}, connection) => track(new LockClient(connection ?? lockConnection(), { keyPrefix: prefix, ...options })),
    lockConnection,
    keys: async (connection) => (await scanAll(connection)).filter((key) => !isRecord(key) && !isIdentityKey(key)),
    records: async (connection) => {
      const records = (await scanAll(connection)).filter(isRecord);
      const conn = connection ?? admin!;
      return Promise.all(records.map(async (key) => ({ key, ttlMs: await conn.pttl(key) })));
    },
    track,
  };
}

/** Counts how many tasks are inside a critical section at once, locally and in Redis. */
export class OverlapProbe {
  inside = 0;
  maxInside = 0;
  entries = 0;

  enter(): void {
    this.inside += 1;
    this.entries += 1;
    this.maxInside = Math.max(this.maxInside, this.inside);
  }

  leave(): void {
    this.inside -= 1;
  }
}

/** A record that answers a resent final release or forceUnlock: it expires by itself. */
export const isRecord = (key: string): boolean => key.includes(':rec:');

/** A client's process identity key (lib/keys.ts identityKey), written while it holds or waits. */
export const isIdentityKey = (key: string): boolean => /:\}:client:/.test(key);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until `check` holds; polls every 5 ms. */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** Blocks the event loop for `ms` (as a process under SIGSTOP): no timer or I/O callback runs meanwhile. */
export function freezeFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: timers cannot fire
  }
}
