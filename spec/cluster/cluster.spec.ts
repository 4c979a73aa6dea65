import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCluster, TEST_CLIENT } from '../helpers/clients.js';
import { LockClient, MultiLock, type LockClientOptions, type LockLostInfo } from '../../lib/index.js';
import { sleep, until } from '../helpers/fixtures.js';
import { spawnCluster, type SpawnedCluster } from '../../tools/redis-cluster.js';

// One real 3-master + 3-replica cluster for this file; the failover test runs last.
describe('Redis Cluster', () => {
  let cluster: SpawnedCluster;
  const closers: (() => Promise<void>)[] = [];
  let run = 0;

  beforeAll(async () => {
    cluster = await spawnCluster(3, 1, 1_000);
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster.stop();
  }, 60_000);

  const connect = (): Cluster => {
    const conn = new Cluster(cluster.startupNodes, { clusterRetryStrategy: () => 100 });
    conn.on('error', () => undefined);
    closers.push(() => Promise.resolve(conn.disconnect()));
    return conn;
  };
  /** A LockClient on a Cluster connection of the client family under test. */
  const client = (options: LockClientOptions = {}): LockClient => {
    const { connection, close } = connectCluster(cluster.startupNodes);
    closers.push(close);
    const locks = new LockClient(connection, { keyPrefix: 'c', ...options });
    locks.on('error', () => undefined);
    closers.push(() => locks.close());
    return locks;
  };
  const node = (port: number): Redis => {
    const conn = new Redis({ port, host: '127.0.0.1' });
    conn.on('error', () => undefined);
    closers.push(() => Promise.resolve(conn.disconnect()));
    return conn;
  };
  const fresh = (label: string): string => `${label}-${(run += 1)}`;

  it('locks, re-enters, waits and wakes on a cluster (names with braces too)', async () => {
    const locks = client();
    for (const name of [fresh('basic'), `{${fresh('braced')}}x`, `a}${fresh('b')}{`]) {
      const lock = locks.getLock(name);
      await locks.runInContext(async () => {
        await lock.lock();
        await lock.lock();
        expect(await lock.getHoldCount()).toBe(2);
        await lock.unlock();
        await lock.unlock();
      });
      await lock.lock(60_000);
      const started = performance.now();
      const waiting = client().getLock(name).tryLock(20_000, 1_000);
      await sleep(100);
      await lock.unlock();
      expect(await waiting).toBe(true);
      // Woken by the sharded notice, not by the 60 s TTL.
      expect(performance.now() - started).toBeLessThan(5_000);
    }
  });

  // iovalkey's Cluster keeps no sharded subscriptions: rlock uses classic pub/sub on it (spec below).
  it.skipIf(TEST_CLIENT === 'iovalkey')('sends notices on the shard of the lock only (SSUBSCRIBE / SPUBLISH)', async () => {
    const name = fresh('sharded');
    const holder = client().getLock(name);
    await holder.lock(60_000);
    const waiterClient = client();
    const waiting = waiterClient.getLock(name).tryLock(20_000, 1_000);
    const channel = `{c:${name}}:wake:${waiterClient.id}`;
    const owner = await cluster.masterOf(calculateSlot(channel));
    for (let i = 0; i < 100; i += 1) {
      if (((await node(owner.port).call('PUBSUB', 'SHARDCHANNELS', `{c:${name}}*`)) as string[]).length > 0) break;
      await sleep(20);
    }
    expect(await node(owner.port).call('PUBSUB', 'SHARDCHANNELS', `{c:${name}}*`)).toEqual([channel]);
    for (const other of cluster.nodes.filter((n) => n !== owner)) {
      expect(await node(other.port).call('PUBSUB', 'SHARDCHANNELS', `{c:${name}}*`)).toEqual([]);
    }
    await holder.unlock();
    expect(await waiting).toBe(true);
  });

  it.runIf(TEST_CLIENT === 'iovalkey')('on iovalkey, notices travel by classic pub/sub, which wakes waiters', async () => {
    const name = fresh('valkey');
    const holder = client().getLock(name);
    await holder.lock(60_000);
    const waiterClient = client();
    const started = performance.now();
    const waiting = waiterClient.getLock(name).tryLock(20_000, 1_000);
    // Its channel ends with its listener id: the client id, marked as listening classic.
    const channel = `{c:${name}}:wake:${waiterClient.id}~c`;
    const subscribed = async (): Promise<boolean> =>
      (await Promise.all(cluster.nodes.map(async (n) => ((await node(n.port).call('PUBSUB', 'CHANNELS', channel)) as string[]).length))).some(Boolean);
    for (let i = 0; i < 100 && !(await subscribed()); i += 1) await sleep(20);
    expect(await subscribed()).toBe(true);
    await holder.unlock();
    expect(await waiting).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('classic pub/sub, when asked for, still wakes waiters', async () => {
    const name = fresh('classic');
    const holder = client({ pubsub: 'classic' }).getLock(name);
    await holder.lock(60_000);
    const started = performance.now();
    const waiting = client({ pubsub: 'classic' }).getLock(name).tryLock(20_000, 1_000);
    await sleep(100);
    await holder.unlock();
    expect(await waiting).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('read-write lock: readers share, a writer excludes and wakes readers; renewed on the cluster', async () => {
    const name = fresh('rw');
    const a = client({ watchdogTimeout: 1_500 });
    const b = client({ watchdogTimeout: 1_500 });
    const lost: LockLostInfo[] = [];
    a.on('lost', (info) => lost.push(info));
    b.on('lost', (info) => lost.push(info));
    const writer = a.getReadWriteLock(name).writeLock();
    await writer.lock();
    const readers = [b, b, a].map(async (locks) => {
      const read = locks.getReadWriteLock(name).readLock();
      const started = performance.now();
      expect(await read.tryLock(20_000)).toBe(true);
      return { read, waited: performance.now() - started };
    });
    await sleep(1_200); // renewals of the write hold run on the cluster meanwhile
    await writer.unlock();
    const got = await Promise.all(readers);
    for (const { waited } of got) expect(waited).toBeLessThan(10_000);
    expect(await a.getReadWriteLock(name).writeLock().tryLock()).toBe(false);
    await sleep(1_200); // renewals of the read holds
    expect(lost).toEqual([]);
    for (const { read } of got) await read.unlock();
    expect(await a.getReadWriteLock(name).writeLock().tryLock()).toBe(true);
    await a.getReadWriteLock(name).writeLock().unlock();
  }, 30_000);

  it('fair lock: waiters from 3 clients get it in the order they asked, woken by sharded notices', async () => {
    const name = fresh('fair');
    const clients = [client(), client(), client()];
    const holder = clients[0]!.getFairLock(name);
    await holder.lock(60_000);
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 6; i += 1) {
      const lock = clients[i % 3]!.getFairLock(name);
      waiters.push(
        (async () => {
          expect(await lock.tryLock(20_000, 5_000)).toBe(true);
          order.push(i);
          await lock.unlock();
        })(),
      );
      // Enqueued one after another: the next asks only once this one's entry is in the queue
      // (a fixed pause was not always enough on a loaded machine).
      await until(async () => (await holder.getQueue()).length === i + 1);
    }
    const started = performance.now();
    await holder.unlock();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    // Six hand-overs by notice, far below the holder's 60 s TTL or any check-in interval.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('fenced lock: tokens grow across clients on the cluster', async () => {
    const name = fresh('fenced');
    const tokens: number[] = [];
    for (const locks of [client(), client(), client()]) {
      const lock = locks.getFencedLock(name);
      const token = await lock.tryLockAndGetToken(5_000, 5_000);
      expect(token).not.toBeNull();
      tokens.push(token!);
      await lock.unlock();
    }
    expect(tokens).toEqual([...tokens].sort((x, y) => x - y));
    expect(new Set(tokens).size).toBe(3);
  });

  it('MultiLock over locks on different shards: all or nothing', async () => {
    const names = Array.from({ length: 3 }, (_, i) => fresh(`multi-${i}`));
    const ports = new Set(await Promise.all(names.map(async (n) => (await cluster.masterOf(calculateSlot(`{c:${n}}`))).port)));
    expect(ports.size).toBeGreaterThan(1);
    const a = client();
    const b = client();
    const multi = new MultiLock(...names.map((n) => a.getLock(n)));
    await b.getLock(names[2]!).lock(60_000);
    expect(await multi.tryLock(300, 5_000)).toBe(false);
    for (const n of names.slice(0, 2)) expect(await a.getLock(n).isLocked()).toBe(false);
    await b.getLock(names[2]!).forceUnlock();
    expect(await multi.tryLock(2_000, 5_000)).toBe(true);
    for (const n of names) expect(await b.getLock(n).isLocked()).toBe(true);
    await multi.unlock();
  });

  it('3 clients contending on locks spread over every shard never overlap', async () => {
    // Names chosen by where they hash: three on each master.
    const names: string[] = [];
    const perPort = new Map<number, number>();
    for (let i = 0; i < 300 && names.length < 9; i += 1) {
      const name = fresh(`spread-${i}`);
      const { port } = await cluster.masterOf(calculateSlot(`{c:${name}}`));
      if ((perPort.get(port) ?? 0) >= 3) continue;
      perPort.set(port, (perPort.get(port) ?? 0) + 1);
      names.push(name);
    }
    expect([...perPort.values()]).toEqual([3, 3, 3]);
    const clients = [client(), client(), client()];
    const probe = connect();
    let violations = 0;
    let entries = 0;
    await Promise.all(
      Array.from({ length: 27 }, async (_, task) => {
        const name = names[task % names.length]!;
        const lock = clients[task % 3]!.getLock(name);
        for (let round = 0; round < 8; round += 1) {
          await lock.lock();
          try {
            if ((await probe.incr(`{c:${name}}:probe`)) !== 1) violations += 1;
            await sleep(1);
            if ((await probe.decr(`{c:${name}}:probe`)) !== 0) violations += 1;
            entries += 1;
          } finally {
            await lock.unlock();
          }
        }
      }),
    );
    expect({ entries, violations }).toEqual({ entries: 27 * 8, violations: 0 });
  });

  it('renews 10,000 held locks with a handful of calls per node per tick', async () => {
    const locks = client({ watchdogTimeout: 3_000 });
    const leases = [];
    const prefix = fresh('many');
    for (let i = 0; i < 10_000; i += 1_000) {
      leases.push(...(await Promise.all(Array.from({ length: 1_000 }, (_, j) => locks.getLock(`${prefix}-${i + j}`).acquire()))));
    }
    const masters = [];
    for (const n of cluster.nodes) {
      if ((await node(n.port).call('ROLE').then((r) => (r as string[])[0])) === 'master') masters.push(n);
    }
    expect(masters).toHaveLength(3);
    // Count renewal calls per master over exactly one tick.
    let renewed = 0;
    const oneTick = new Promise<void>((resolve) => {
      const onRenewed = (): void => {
        renewed += 1;
        if (renewed === 10_000) {
          locks.off('renewed', onRenewed);
          resolve();
        }
      };
      locks.on('renewed', onRenewed);
    });
    for (const m of masters) await node(m.port).config('RESETSTAT');
    await oneTick;
    const callsPerNode = await Promise.all(
      masters.map(async (m) => {
        const stats = await node(m.port).info('commandstats');
        const calls = (name: string): number => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
        return calls('evalsha') + calls('eval');
      }),
    );
    // ~3,333 locks per node, 500 per call: 7 calls per node (one tick), not 3,333.
    for (const calls of callsPerNode) {
      expect(calls).toBeGreaterThan(0);
      expect(calls).toBeLessThanOrEqual(8);
    }
    // A thousand at a time, as they were taken: 10,000 releases sent at once can take longer than
    // a release's 5 s answer deadline on a busy machine.
    for (let i = 0; i < leases.length; i += 1_000) await Promise.all(leases.slice(i, i + 1_000).map((lease) => lease.release()));
  }, 60_000);

  it('keeps a held lock working while its slot migrates to another master', async () => {
    const name = fresh('migrate');
    const key = `{c:${name}}`;
    const slot = calculateSlot(key);
    const locks = client({ watchdogTimeout: 1_500 });
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    const lock = locks.getLock(name);
    await lock.lock();
    const waiting = client().getLock(name).tryLock(20_000, 5_000);
    await sleep(100);

    const source = await cluster.masterOf(slot);
    const targets = [];
    for (const n of cluster.nodes) {
      if (n !== source && (await node(n.port).call('ROLE').then((r) => (r as string[])[0])) === 'master') targets.push(n);
    }
    const target = targets[0]!;
    const id = async (port: number): Promise<string> => (await node(port).call('CLUSTER', 'MYID')) as string;
    const [sourceId, targetId] = [await id(source.port), await id(target.port)];
    await node(target.port).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId);
    await node(source.port).call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId);
    const keys = (await node(source.port).call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
    expect(keys).toContain(key);
    await node(source.port).call('MIGRATE', '127.0.0.1', target.port, '', 0, 5_000, 'KEYS', ...keys);
    for (const n of cluster.nodes) await node(n.port).call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId).catch(() => undefined);
    expect((await cluster.masterOf(slot)).port).toBe(target.port);

    // Renewals find it on the new master (two ticks), and the owner still holds it.
    await sleep(1_200);
    expect(lost).toEqual([]);
    expect(await lock.isLocked()).toBe(true);
    expect(await node(target.port).exists(key)).toBe(1);
    await lock.unlock();
    expect(await waiting).toBe(true);
  }, 30_000);

  it('recovers when a master dies during contention: waits end within budget, locking resumes', async () => {
    const name = fresh('failover');
    const key = `{c:${name}}`;
    const victim = await cluster.masterOf(calculateSlot(key));
    const clients = [client(), client(), client()];
    const budgetMs = 8_000;
    let stop = false;
    const outcomes: { elapsed: number; ok: boolean }[] = [];
    const workers = clients.map(async (locks) => {
      const lock = locks.getLock(name);
      for (let i = 0; i < 200 && !stop; i += 1) {
        const started = performance.now();
        const got = await lock.tryLock(budgetMs, 2_000).catch(() => false);
        outcomes.push({ elapsed: performance.now() - started, ok: got });
        if (got) {
          await sleep(2);
          await lock.unlock().catch(() => undefined);
        } else {
          await sleep(50);
        }
      }
    });
    await sleep(300);
    victim.signal('SIGKILL');
    await sleep(500);
    await cluster.waitHealthy(20_000);
    await sleep(1_500);
    stop = true;
    await Promise.all(workers);
    // No wait outlived its budget by more than a moment, whatever failed meanwhile.
    expect(Math.max(...outcomes.map((o) => o.elapsed))).toBeLessThan(budgetMs + 1_000);
    expect(outcomes.filter((o) => o.ok).length).toBeGreaterThan(3);
    const lock = client().getLock(name);
    expect(await lock.tryLock(5_000, 2_000)).toBe(true);
    await lock.unlock();
    await victim.start();
  }, 60_000);
});
