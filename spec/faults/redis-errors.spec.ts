import { Redis, ReplyError, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  isLockError,
  LockClient,
  LockError,
  LockRedisError,
  type LockClientOptions,
  type LockOperation,
  type RLock,
} from '../../lib/index.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';
import { until } from '../helpers/fixtures.js';

// A failure from Redis or the connection reaches the caller as a LockRedisError: a LockError
// that names the lock and what rlock was doing, with the original error as `cause`.

const NAME = 'faulty';
/** A waiting call that neither failed nor succeeded would hang: it gives up after 10 s. */
const noHang = (): { signal: AbortSignal } => ({ signal: AbortSignal.timeout(10_000) });

/** `error` is a LockRedisError for `operation` on NAME, whose cause passes `cause`. */
function expectRedisError(error: unknown, operation: LockOperation, cause: (cause: unknown) => void, lockName: string | null = NAME): void {
  expect(error, String(error)).toBeInstanceOf(LockRedisError);
  expect(error).toBeInstanceOf(LockError);
  expect(isLockError(error)).toBe(true);
  const redisError = error as LockRedisError;
  expect(redisError.operation).toBe(operation);
  if (lockName !== null) expect(redisError.lockName).toBe(lockName);
  cause(redisError.cause);
}

/** The rejection of `promise` (fails if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to reject, it resolved');
}

const replyError = (pattern: RegExp) => (cause: unknown): void => {
  expect(cause).toBeInstanceOf(ReplyError);
  expect((cause as Error).message).toMatch(pattern);
};

const KINDS: { kind: string; lock: (client: LockClient) => RLock }[] = [
  { kind: 'getLock', lock: (c) => c.getLock(NAME) },
  { kind: 'getFencedLock', lock: (c) => c.getFencedLock(NAME) },
  { kind: 'getFairLock', lock: (c) => c.getFairLock(NAME) },
  { kind: 'readLock', lock: (c) => c.getReadWriteLock(NAME).readLock() },
  { kind: 'writeLock', lock: (c) => c.getReadWriteLock(NAME).writeLock() },
];

describe('Redis errors are lock errors', () => {
  let server: SpawnedRedis;
  let admin: Redis;
  const opened: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    server = await spawnRedis();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await server.stop();
  });
  afterEach(async () => {
    for (const thing of opened.reverse()) await thing.close().catch(() => undefined);
    opened.length = 0;
  });

  /** A connection on which a command gives up after one retry while the server is down. */
  const connect = (on: SpawnedRedis, redisOptions: RedisOptions = {}): Redis => {
    const conn = new Redis(on.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50, ...redisOptions });
    conn.on('error', () => undefined);
    opened.push({ close: () => Promise.resolve(conn.disconnect()) });
    return conn;
  };

  /** A LockClient whose `error` events are collected. */
  const client = (on: SpawnedRedis, options: LockClientOptions = {}) => {
    const conn = connect(on);
    const locks = new LockClient(conn, options);
    const errors: unknown[] = [];
    locks.on('error', (error) => errors.push(error));
    opened.push(locks);
    return { locks, errors };
  };

  it('OOM: acquisitions reject with LockRedisError (acquire) caused by the ReplyError', async () => {
    const { locks } = client(server);
    await admin.set('filler', 'x'.repeat(10_000));
    await admin.config('SET', 'maxmemory', '1');
    try {
      const oom = replyError(/OOM/);
      for (const { lock } of KINDS) {
        expectRedisError(await rejectionOf(lock(locks).tryLock()), 'acquire', oom);
        expectRedisError(await rejectionOf(lock(locks).lock(undefined, noHang())), 'acquire', oom);
        expectRedisError(await rejectionOf(lock(locks).acquire({ leaseTime: 5_000, ...noHang() })), 'acquire', oom);
      }
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      await admin.del('filler');
    }
  });

  it('OOM: a held lock is still released (deleting needs no memory; the resend record is skipped)', async () => {
    // One kind per name: each kind on a key prefix of its own.
    const held = await Promise.all(
      KINDS.map(async ({ kind, lock }) => {
        const one = lock(client(server, { keyPrefix: `oom-${kind}` }).locks);
        expect(await one.tryLock(0, 30_000), kind).toBe(true);
        return { kind, lock: one };
      }),
    );
    await admin.set('filler', 'x'.repeat(10_000));
    await admin.config('SET', 'maxmemory', '1');
    try {
      for (const { kind, lock } of held) {
        await expect(lock.unlock(), kind).resolves.toBeUndefined();
        expect(await lock.isLocked(), kind).toBe(false);
      }
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      await admin.del('filler');
    }
  });

  it('READONLY replica: acquire and forceUnlock reject with LockRedisError', async () => {
    // The replica syncs at once (the default waits 5 s for more replicas to sync with).
    const master = await spawnRedis(['--repl-diskless-sync-delay', '0']);
    const { locks } = client(server);
    const { locks: onMaster } = client(master);
    await admin.replicaof('127.0.0.1', master.port);
    try {
      await until(async () => (await admin.info('replication')).includes('master_link_status:up'), 10_000);
      const readOnly = replyError(/READONLY/);
      for (const { lock } of KINDS) {
        expectRedisError(await rejectionOf(lock(locks).acquire(noHang())), 'acquire', readOnly);
        expectRedisError(await rejectionOf(lock(locks).tryLock(0, 5_000)), 'acquire', readOnly);
      }
      // forceUnlock writes only when there is something to delete: hold each lock on the master.
      for (const { kind, lock } of KINDS) {
        await lock(onMaster).lock(20_000);
        await until(async () => (await admin.exists(`{rlock:${NAME}}`)) === 1, 5_000);
        expectRedisError(await rejectionOf(lock(locks).forceUnlock()), 'forceUnlock', readOnly);
        expect(await lock(onMaster).forceUnlock(), kind).toBe(true);
      }
    } finally {
      await admin.replicaof('NO', 'ONE');
      await master.stop();
    }
  });

  it('a stopped server: calls reject with LockRedisError caused by MaxRetriesPerRequestError', async () => {
    const down = await spawnRedis();
    try {
      const { locks } = client(down);
      const held = locks.getLock(NAME);
      await held.lock(20_000);
      await down.stop();
      const maxRetries = (cause: unknown): void => expect((cause as Error).name).toBe('MaxRetriesPerRequestError');
      for (const { lock } of KINDS) {
        expectRedisError(await rejectionOf(lock(locks).lock(undefined, noHang())), 'acquire', maxRetries);
        expectRedisError(await rejectionOf(lock(locks).isLocked()), 'query', maxRetries);
        expectRedisError(await rejectionOf(lock(locks).remainTimeToLive()), 'query', maxRetries);
        expectRedisError(await rejectionOf(lock(locks).forceUnlock()), 'forceUnlock', maxRetries);
      }
      // The owner of an unscoped hold is known locally, so these must ask Redis.
      expectRedisError(await rejectionOf(held.getHoldCount()), 'query', maxRetries);
      expectRedisError(await rejectionOf(held.unlock()), 'release', maxRetries);
    } finally {
      await down.stop();
    }
  });

  it('renewals failing in the background are reported as LockRedisError (renew) on `error`', async () => {
    const down = await spawnRedis();
    try {
      // A subscriber of our own: its connection errors are ours to handle, so every `error`
      // event of the client comes from renewals.
      const { locks, errors } = client(down, { watchdogTimeout: 900, subscriber: connect(down) });
      const lease = await locks.getLock(NAME).acquire();
      await down.stop();
      // Renewals every 300 ms; each fails within a couple of 50 ms reconnect attempts.
      await until(() => errors.length >= 2, 5_000);
      expect(lease.signal.aborted).toBe(false);
      for (const error of errors) expectRedisError(error, 'renew', (cause) => expect(cause).toBeInstanceOf(Error), null);
    } finally {
      await down.stop();
    }
  });
});
