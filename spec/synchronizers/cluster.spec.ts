import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCluster } from '../helpers/clients.js';
import { LockClient } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { spawnCluster, type SpawnedCluster } from '../../tools/redis-cluster.js';

describe('semaphore and latch on a Redis Cluster', () => {
  let cluster: SpawnedCluster;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    cluster = await spawnCluster(3, 0, 1_000);
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster.stop();
  }, 60_000);

  const client = (): LockClient => {
    const { connection: conn, close } = connectCluster(cluster.startupNodes);
    const locks = new LockClient(conn, { keyPrefix: 'c', watchdogTimeout: 1_500 });
    locks.on('error', () => undefined);
    closers.push(async () => {
      await locks.close();
      await close();
    });
    return locks;
  };

  it('hash tags keep every key in one slot; sharded notices wake waiters; permits are renewed', async () => {
    const [a, b] = [client(), client()];
    for (const name of ['sem', '{braced}x', 'a}b{']) {
      const held = await a.getSemaphore(name, { permits: 2 }).acquire({ permits: 2 });
      const started = performance.now();
      const waiting = b.getSemaphore(name, { permits: 2 }).acquire({ waitTime: 10_000 });
      const fairHeld = await a.getSemaphore(`${name}-f`, { permits: 1, fair: true }).acquire();
      const fairWaiting = b.getSemaphore(`${name}-f`, { permits: 1, fair: true }).acquire({ waitTime: 10_000 });
      await sleep(1_200); // renewals of the permits run on the cluster meanwhile (watchdog 1.5 s)
      expect(held.signal.aborted).toBe(false);
      await held.release();
      await fairHeld.release();
      const [permit, fairPermit] = await Promise.all([waiting, fairWaiting]);
      expect(performance.now() - started).toBeLessThan(5_000);
      await permit.release();
      await fairPermit.release();

      const gate = a.getCountDownLatch(name);
      expect(await gate.trySetCount(1)).toBe(true);
      const opened = b.getCountDownLatch(name).wait({ waitTime: 10_000 });
      await sleep(100);
      await gate.countDown();
      expect(await opened).toBe(true);
    }
  }, 60_000);
});
