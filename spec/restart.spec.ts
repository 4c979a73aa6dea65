import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '../lib/index.js';
import { sleep } from './helpers/fixtures.js';
import { spawnRedis, type SpawnedRedis } from '../tools/redis-server.js';

describe('Redis restarted while tasks wait', () => {
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

  const client = (): LockClient => {
    const conn = new Redis(server.url, { retryStrategy: () => 50 });
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
    const admin = new Redis(server.url);
    conns.push(admin);
    const contended = holder.getLock('again');
    await contended.lock(5_000);
    const waiting = clients[2]!.getLock('again').tryLock(3_000, 1_000);
    await sleep(50);
    await contended.unlock();
    expect(await waiting).toBe(true);
  }, 20_000);
});
