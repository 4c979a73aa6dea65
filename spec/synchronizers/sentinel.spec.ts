import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { spawnSentinelSet, type SpawnedSentinelSet } from '../../tools/redis-sentinel.js';

// Each test gets its own master + replica + 3 Sentinels: failover changes who is master.
describe('semaphore and latch through Sentinel', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
  });

  const setUp = async (): Promise<SpawnedSentinelSet> => {
    const set = await spawnSentinelSet();
    cleanups.push(() => set.stop());
    return set;
  };
  /** `keepCommands`: ioredis keeps commands through the failover instead of failing them after 20 retries. */
  const client = (set: SpawnedSentinelSet, keepCommands = false): LockClient => {
    const redis = new Redis({
      sentinels: set.sentinelNodes,
      name: set.name,
      retryStrategy: () => 100,
      ...(keepCommands && { maxRetriesPerRequest: null }),
    });
    redis.on('error', () => undefined);
    const locks = new LockClient(redis, { keyPrefix: 's' });
    locks.on('error', () => undefined);
    cleanups.push(async () => {
      await locks.close();
      redis.disconnect();
    });
    return locks;
  };
  const direct = (port: number): Redis => {
    const conn = new Redis({ port, host: '127.0.0.1' });
    conn.on('error', () => undefined);
    cleanups.push(() => Promise.resolve(conn.disconnect()));
    return conn;
  };

  it('grants permits, wakes waiters and releases a latch through a Sentinel-backed connection', async () => {
    const set = await setUp();
    const [a, b] = [client(set), client(set)];
    const held = await a.getSemaphore('sem', { permits: 2 }).acquire({ permits: 2, leaseTime: 60_000 });
    expect(await direct(set.master.port).exists('{s:sem}:semaphore')).toBe(1);
    const started = performance.now();
    const waiting = b.getSemaphore('sem', { permits: 2 }).acquire({ waitTime: 10_000 });
    await sleep(100);
    expect(await b.getSemaphore('sem', { permits: 2 }).availablePermits()).toBe(0);
    await held.release();
    const permit = await waiting;
    // Woken by the release's notice, not by the 60 s lease running out.
    expect(performance.now() - started).toBeLessThan(5_000);
    await permit.release();
    expect(await b.getSemaphore('sem', { permits: 2 }).availablePermits()).toBe(2);

    const latch = a.getCountDownLatch('ready');
    expect(await latch.trySetCount(2)).toBe(true);
    const waiter = b.getCountDownLatch('ready').wait({ waitTime: 10_000 });
    await latch.countDown();
    await sleep(50);
    await latch.countDown();
    expect(await waiter).toBe(true);
    expect(await direct(set.master.port).exists('{s:ready}:latch')).toBe(0);
  }, 60_000);

  it('a waiter outlives the master being killed and the replica promoted; the limit holds there', async () => {
    const set = await setUp();
    const [a, b] = [client(set), client(set, true)];
    const sem = (locks: LockClient) => locks.getSemaphore('failover', { permits: 1 });
    // The only permit, on a short fixed lease: after failover nobody releases it, its lease ends.
    await sem(a).acquire({ leaseTime: 3_000 });
    await sleep(200); // replicated to the replica meanwhile
    const waiting = sem(b).acquire({ waitTime: 30_000, leaseTime: 20_000 });
    set.master.signal('SIGKILL');
    const promoted = await set.waitFailover(set.master.port);
    expect(promoted).toBe(set.replica.port);
    const permit = await waiting;
    expect(await direct(promoted).exists('{s:failover}:semaphore')).toBe(1);
    // The waiter's permit is out on the new master: nobody else gets one.
    expect(await sem(a).tryAcquire()).toBeNull();
    await permit.release();
    const again = await sem(a).tryAcquire({ waitTime: 5_000 });
    expect(again).not.toBeNull();
    await again!.release();
  }, 90_000);
});
