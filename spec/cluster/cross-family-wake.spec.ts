import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCluster, TEST_CLIENT, type TestClient } from '../helpers/clients.js';
import { LockClient, type LockClientOptions } from '../../lib/index.js';
import { lockKeys } from '../../lib/keys.js';
import { electionKeys, latchKeys, semaphoreKeys } from '../../lib/keys.js';
import { sleep, until } from '../helpers/fixtures.js';
import { spawnCluster, type SpawnedCluster } from '../../tools/redis-cluster.js';

// Processes sharing a lock name may use different client families, which listen differently on a
// Cluster of Redis 7: ioredis and node-redis by sharded pub/sub, iovalkey by classic pub/sub. A
// release must wake a waiter whichever family either uses, as fast as within one family. Every
// holder here keeps its lease for a minute and every waiter re-checks rarely, so only the notice
// can wake a waiter within WAKE_BOUND_MS.

const FAMILIES: readonly TestClient[] = ['ioredis', 'node-redis', 'node-redis-resp3', 'iovalkey'];
/** Release to acquisition: the wake-up bound, well under every re-check a waiter makes by itself. */
const WAKE_BOUND_MS = 200;
const PREFIX = 'xf';
/** Waiters' re-checks: a fair waiter checks in every third of this; a latch waiter every third of the watchdog's. */
const SLOW_RECHECKS: LockClientOptions = { fairLockWaitTimeout: 60_000, watchdogTimeout: 60_000 };

describe('wake-ups across client families on a Cluster', () => {
  let cluster: SpawnedCluster;
  let admin: Cluster;
  const nodes: Redis[] = [];
  const closers: (() => Promise<void>)[] = [];
  const kept = new Map<string, LockClient>();
  let run = 0;

  beforeAll(async () => {
    cluster = await spawnCluster(3, 0, 1_000);
    admin = new Cluster(cluster.startupNodes, { clusterRetryStrategy: () => 100 });
    admin.on('error', () => undefined);
    for (const node of cluster.nodes) {
      const conn = new Redis({ host: '127.0.0.1', port: node.port });
      conn.on('error', () => undefined);
      nodes.push(conn);
    }
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    admin?.disconnect();
    for (const node of nodes) node.disconnect();
    await cluster?.stop();
  }, 60_000);

  /** The file's LockClient of `family` in `role` (two per family: a releaser and a waiter never share one). */
  const client = (family: TestClient, role: 'releaser' | 'waiter'): LockClient => {
    const key = `${family}/${role}`;
    let locks = kept.get(key);
    if (!locks) {
      const { connection, close } = connectCluster(cluster.startupNodes, {}, family);
      locks = new LockClient(connection, { keyPrefix: PREFIX, ...SLOW_RECHECKS });
      locks.on('error', () => undefined);
      const opened = locks;
      closers.push(close, () => opened.close());
      kept.set(key, locks);
    }
    return locks;
  };
  const fresh = (label: string): string => `${label}-${(run += 1)}`;

  /** Whether `waiter` is subscribed to a channel of `name` (classic or sharded, on any node). */
  const subscribed = async (name: string): Promise<boolean> => {
    const pattern = `{${PREFIX}:${name}}*`;
    const found = await Promise.all(
      nodes.map(async (node) => [...((await node.call('PUBSUB', 'CHANNELS', pattern)) as string[]), ...((await node.call('PUBSUB', 'SHARDCHANNELS', pattern)) as string[])]),
    );
    return found.flat().length > 0;
  };
  /** Whether a member of client `id` is in one of the sorted sets `keys` (waiter sets, fair queues). */
  const registered = async (id: string, keys: readonly string[]): Promise<boolean> =>
    (await Promise.all(keys.map((key) => admin.zrange(key, 0, -1)))).flat().some((member) => member.startsWith(id));

  /**
   * Waits until the waiter listens and is registered in Redis, and its next attempt (it asks again
   * once subscribed) had time to be answered: from then on only a notice wakes it in time.
   */
  const settled = async (name: string, waiter: LockClient, keys: readonly string[]): Promise<void> => {
    await until(() => subscribed(name), 5_000);
    await until(() => registered(waiter.id, keys), 5_000);
    await sleep(100);
  };

  /** ms from the start of `release` to `woken` resolving true. */
  const timeWake = async (release: () => Promise<unknown>, woken: Promise<unknown>): Promise<number> => {
    const started = performance.now();
    await release();
    expect(await woken).toBeTruthy();
    return performance.now() - started;
  };

  describe('plain lock: every ordered pair of families, releaser → waiter', () => {
    for (const from of FAMILIES) {
      for (const to of FAMILIES) {
        it(`${from} → ${to}`, async () => {
          const name = fresh(`lock-${from}-${to}`);
          const holder = client(from, 'releaser').getLock(name);
          const waiter = client(to, 'waiter');
          await holder.lock(60_000);
          const waiting = waiter.getLock(name).tryLock(3_000, 10_000);
          await settled(name, waiter, [lockKeys(PREFIX, name).waiters]);
          expect(await timeWake(() => holder.unlock(), waiting)).toBeLessThan(WAKE_BOUND_MS);
          await waiter.getLock(name).forceUnlock();
        });
      }
    }
  });

  // One family of each way of listening; the family under test is one of them.
  const [sharded, classic]: [TestClient, TestClient] = TEST_CLIENT === 'iovalkey' ? ['ioredis', 'iovalkey'] : [TEST_CLIENT, 'iovalkey'];

  for (const [from, to] of [
    [sharded, classic],
    [classic, sharded],
  ] as const) {
    describe(`every kind, ${from} → ${to}`, () => {
      it('fair lock: the release tells the head of the queue its turn', async () => {
        const name = fresh('fair');
        const holder = client(from, 'releaser').getFairLock(name);
        const waiter = client(to, 'waiter');
        await holder.lock(60_000);
        const waiting = waiter.getFairLock(name).tryLock(3_000, 10_000);
        await settled(name, waiter, [lockKeys(PREFIX, name).queue]);
        expect(await timeWake(() => holder.unlock(), waiting)).toBeLessThan(WAKE_BOUND_MS);
        await waiter.getFairLock(name).forceUnlock();
      });

      it('read-write lock: a write release wakes readers of both families', async () => {
        const name = fresh('rw');
        const writer = client(from, 'releaser').getReadWriteLock(name).writeLock();
        await writer.lock(60_000);
        const readers = [client(to, 'waiter'), client(from, 'waiter')];
        const waiting = Promise.all(readers.map((locks) => locks.getReadWriteLock(name).readLock().acquire({ waitTime: 3_000, leaseTime: 10_000 })));
        const readWaiters = `${lockKeys(PREFIX, name).lock}:read-waiters`;
        for (const reader of readers) await settled(name, reader, [readWaiters]);
        expect(await timeWake(() => writer.unlock(), waiting)).toBeLessThan(WAKE_BOUND_MS);
        for (const lease of await waiting) await lease.release();
      });

      it('semaphore: a release wakes a waiter for the freed permit', async () => {
        const name = fresh('sem');
        const held = await client(from, 'releaser').getSemaphore(name, { permits: 1 }).acquire({ leaseTime: 60_000 });
        const waiter = client(to, 'waiter');
        const waiting = waiter.getSemaphore(name, { permits: 1 }).acquire({ waitTime: 3_000, leaseTime: 10_000 });
        await settled(name, waiter, [semaphoreKeys(PREFIX, name).waiters]);
        expect(await timeWake(() => held.release(), waiting)).toBeLessThan(WAKE_BOUND_MS);
        await (await waiting).release();
      });

      it('fair semaphore: a release tells the head of the queue its turn', async () => {
        const name = fresh('fair-sem');
        const held = await client(from, 'releaser').getSemaphore(name, { permits: 1, fair: true }).acquire({ leaseTime: 60_000 });
        const waiter = client(to, 'waiter');
        const waiting = waiter.getSemaphore(name, { permits: 1, fair: true }).acquire({ waitTime: 3_000, leaseTime: 10_000 });
        await settled(name, waiter, [semaphoreKeys(PREFIX, name).queue]);
        expect(await timeWake(() => held.release(), waiting)).toBeLessThan(WAKE_BOUND_MS);
        await (await waiting).release();
      });

      it('count-down latch: the count down to 0 wakes the waiter', async () => {
        const name = fresh('latch');
        const latch = client(from, 'releaser').getCountDownLatch(name);
        await latch.trySetCount(1);
        const waiter = client(to, 'waiter');
        const waiting = waiter.getCountDownLatch(name).wait({ waitTime: 3_000 });
        await settled(name, waiter, [latchKeys(PREFIX, name).waiters]);
        expect(await timeWake(() => latch.countDown(), waiting)).toBeLessThan(WAKE_BOUND_MS);
      });

      it('election: a resign wakes the campaigner, and observers hear every change', async () => {
        const name = fresh('election');
        const leader = await client(from, 'releaser').getElection(name).campaign({ value: 'first' });
        const waiter = client(to, 'waiter');
        const changes = waiter.getElection(name).observe()[Symbol.asyncIterator]();
        expect((await changes.next()).value).toEqual({ value: 'first', epoch: leader.epoch });
        const started = performance.now();
        await leader.proclaim('second');
        const heard = await Promise.race([changes.next(), sleep(1_000).then(() => ({ value: 'nothing within 1 s' }))]);
        expect(heard.value).toEqual({ value: 'second', epoch: leader.epoch });
        expect(performance.now() - started).toBeLessThan(WAKE_BOUND_MS);
        const campaign = waiter.getElection(name).campaign({ value: 'next', waitTime: 3_000 });
        await settled(name, waiter, [electionKeys(PREFIX, name).wait.waiters]);
        expect(await timeWake(() => leader.resign(), campaign)).toBeLessThan(WAKE_BOUND_MS);
        await (await campaign).resign();
        await changes.return?.();
      });
    });
  }
});
