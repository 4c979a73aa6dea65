import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '../lib/index.js';
import { sleep } from './helpers/fixtures.js';
import { spawnRedis, type SpawnedRedis } from '../tools/redis-server.js';

describe('connection failures', () => {
  let server: SpawnedRedis;
  const conns: Redis[] = [];
  const clients: LockClient[] = [];

  beforeAll(async () => {
    server = await spawnRedis();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    for (const conn of conns) conn.disconnect();
    await server.stop();
  });

  const adminConnection = (): Redis => {
    const conn = new Redis(server.url);
    conn.on('error', () => undefined);
    conns.push(conn);
    return conn;
  };

  const client = (options: RedisOptions = {}): LockClient => {
    const conn = new Redis(server.url, { retryStrategy: () => 50, ...options });
    conn.on('error', () => undefined);
    conns.push(conn);
    const locks = new LockClient(conn, { watchdogTimeout: 1_000 });
    locks.on('error', () => undefined);
    clients.push(locks);
    return locks;
  };

  it('waits end within their budget, and locking works again after the restart', async () => {
    const holder = client();
    await holder.getLock('r').lock();
    const waiters = Array.from({ length: 6 }, (_, i) => client().getLock(i % 2 ? 'r' : 'other'));
    await waiters[0]!.lock(); // 'other' is held too, by a waiter client

    const started = performance.now();
    const outcomes = waiters.slice(1).map(async (lock) => {
      const settled = await lock.tryLock(1_500, 5_000).then(
        (got) => ({ got, error: undefined as unknown }),
        (error: unknown) => ({ got: false, error }),
      );
      return { ...settled, elapsed: performance.now() - started };
    });
    await sleep(200);
    await server.stop();
    await sleep(600);
    await server.start();

    for (const outcome of await Promise.all(outcomes)) {
      // The server came back empty: a waiter may have got the lock, or gave up in time.
      expect(outcome.elapsed).toBeLessThan(1_500 + 500);
      if (outcome.error !== undefined) expect(outcome.error).toBeInstanceOf(Error);
    }

    // Every client locks again on the restarted (empty, script-less) server.
    for (const locks of [holder, ...clients.slice(1)]) {
      const lock = locks.getLock(`after-${locks.id}`);
      expect(await lock.tryLock(3_000, 2_000)).toBe(true);
      await lock.unlock();
    }
    const contended = holder.getLock('again');
    await contended.lock(5_000);
    const waiting = clients[2]!.getLock('again').tryLock(3_000, 1_000);
    await sleep(50);
    await contended.unlock();
    expect(await waiting).toBe(true);
  }, 20_000);

  it('a wait ends within its budget while Redis is down, and nothing is left behind', async () => {
    const locks = client();
    const lock = locks.getLock('down');
    expect(await lock.tryLock(0, 1_000)).toBe(true);
    await lock.unlock();
    await server.stop();
    const started = performance.now();
    const outcome = await lock.tryLock(300, 1_000).catch((error: unknown) => error);
    expect(performance.now() - started).toBeLessThan(300 + 300);
    expect(outcome === false || outcome instanceof Error).toBe(true);
    await server.start();
    // The attempt queued while the server was down reaches the fresh server late and
    // acquires: it is undone, so the lock is free for others.
    const other = client().getLock('down');
    expect(await other.tryLock(2_000, 1_000)).toBe(true);
    await other.unlock();
  });

  it('a wait without budget rejects once ioredis gives up on the command', async () => {
    const locks = client({ maxRetriesPerRequest: 1 });
    const lock = locks.getLock('no-budget');
    expect(await lock.tryLock()).toBe(true);
    await lock.unlock();
    await server.stop();
    const started = performance.now();
    await expect(lock.lock()).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(5_000);
    await server.start();
  });

  it('an attempt answered after its wait ran out is undone (server frozen, then resumed)', async () => {
    const locks = client();
    const lock = locks.getLock('frozen');
    expect(await lock.tryLock()).toBe(true);
    await lock.unlock();
    server.signal('SIGSTOP');
    const started = performance.now();
    expect(await lock.tryLock(200, 60_000)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200 + 200);
    server.signal('SIGCONT');
    const admin = adminConnection();
    // The frozen attempt ran when the server resumed and acquired; rlock released it again.
    for (let i = 0; i < 40 && (await admin.exists('{rlock:frozen}')) === 1; i += 1) await sleep(25);
    expect(await admin.exists('{rlock:frozen}', '{rlock:frozen}:waiters')).toBe(0);
    expect(await client().getLock('frozen').tryLock()).toBe(true);
  });
});
