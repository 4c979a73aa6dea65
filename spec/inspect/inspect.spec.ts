import { redisPortOf } from '../../lib/redis/detect.js';
import { describe, expect, it } from 'vitest';
import { majorityHolders } from '../../lib/inspect/composite.js';
import { inspectLock } from '../../lib/inspect/inspect.js';
import { MultiLock } from '../../lib/index.js';
import { LockScripts } from '../../lib/scripts/registry.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';

describe('inspection: getHolders / getQueue', () => {
  const fx = useLockFixture();

  it('a reentrant lock: empty when free; the owner, its hold count and the TTL while held', async () => {
    const locks = fx.client();
    const lock = locks.getLock('job');
    expect(await lock.getHolders()).toEqual([]);
    await locks.runInContext(async () => {
      await lock.lock();
      await lock.lock(60_000);
      const holders = await fx.client().getLock('job').getHolders();
      expect(holders).toHaveLength(1);
      expect(holders[0]!.owner.startsWith(`${locks.id}:`)).toBe(true);
      expect(holders[0]!.holdCount).toBe(2);
      expect(holders[0]!.ttl).toBeGreaterThan(55_000);
      expect(holders[0]!.ttl).toBeLessThanOrEqual(60_000);
      await lock.unlock();
      await lock.unlock();
    });
    expect(await lock.getHolders()).toEqual([]);
  });

  it('a fenced lock adds its current token', async () => {
    const lock = fx.client().getFencedLock('ledger');
    await lock.lockAndGetToken();
    await lock.unlock();
    const token = await lock.lockAndGetToken(5_000);
    const [holder] = await lock.getHolders();
    expect(holder).toMatchObject({ holdCount: 1, token });
    expect(holder!.ttl).toBeLessThanOrEqual(5_000);
    await lock.unlock();
  });

  it('a read-write lock: each reader on the read side, the writer on the write side', async () => {
    const a = fx.client();
    const b = fx.client();
    const rw = a.getReadWriteLock('catalog');
    await rw.readLock().lock(10_000);
    await b.runInContext(async () => {
      await b.getReadWriteLock('catalog').readLock().lock();
      await b.getReadWriteLock('catalog').readLock().lock();
    });
    const readers = await rw.readLock().getHolders();
    expect(readers.map((h) => [h.owner.split(':')[0], h.holdCount, h.mode]).sort()).toEqual(
      [[a.id, 1, 'read'], [b.id, 2, 'read']].sort(),
    );
    expect(readers.find((h) => h.owner.startsWith(a.id))!.ttl).toBeLessThanOrEqual(10_000);
    expect(await rw.writeLock().getHolders()).toEqual([]);
    await rw.readLock().forceUnlock();

    const lease = await rw.writeLock().acquire({ leaseTime: 8_000 });
    const [writer] = await b.getReadWriteLock('catalog').writeLock().getHolders();
    expect(writer).toMatchObject({ owner: lease.owner, holdCount: 1, mode: 'write' });
    expect(writer!.ttl).toBeGreaterThan(7_000);
    expect(await rw.readLock().getHolders()).toEqual([]);
    await lease.release();
  });

  it('a fair lock: the queue head first, with how long each has waited; dead waiters are left out', async () => {
    const holder = fx.client();
    const fair = holder.getFairLock('turns');
    const lease = await fair.acquire();
    const first = fx.client();
    const second = fx.client();
    // The second joins 60 ms after the first is queued (a new connection may take a while to open).
    const waits = [first.getFairLock('turns').acquire()];
    waits[0]!.catch(() => undefined);
    await until(async () => (await fair.getQueue()).length === 1);
    await sleep(60);
    waits.push(second.getFairLock('turns').acquire());
    waits[1]!.catch(() => undefined);
    await until(async () => (await fair.getQueue()).length === 2);
    await sleep(50);
    const queue = await fair.getQueue();
    expect(queue.map((w) => w.owner.split('|')[0])).toEqual([first.id, second.id]);
    expect(queue[0]!.waitedMs).toBeGreaterThanOrEqual(queue[1]!.waitedMs + 40);
    expect(queue[1]!.waitedMs).toBeGreaterThanOrEqual(40);
    expect(queue[0]!.waitedMs).toBeLessThan(5_000);
    // A waiter whose place ran out (its client died) is no longer in the queue.
    const admin = fx.redis();
    await admin.zadd(`{${fx.prefix}:turns}:queue`, 1, 'dead|1');
    await admin.zadd(`{${fx.prefix}:turns}:timeouts`, 1, 'dead|1');
    expect(await fair.getQueue()).toHaveLength(2);
    await admin.zrem(`{${fx.prefix}:turns}:queue`, 'dead|1');
    await admin.zrem(`{${fx.prefix}:turns}:timeouts`, 'dead|1');

    await lease.release();
    const next = await waits[0]!;
    expect((await fair.getHolders()).map((h) => h.owner)).toEqual([next.owner]);
    await next.release();
    await (await waits[1]!).release();
    expect(await fair.getQueue()).toEqual([]);
  });

  it('a MultiLock answers each member’s holders, tagged with the member', async () => {
    const locks = fx.client();
    const multi = new MultiLock(locks.getLock('m1'), locks.getFencedLock('m2'));
    expect(await multi.getHolders()).toEqual([]);
    const lease = await multi.acquire();
    const holders = await multi.getHolders();
    expect(holders.map((h) => [h.lock, h.holdCount]).sort()).toEqual([['m1', 1], ['m2', 1]]);
    expect(holders.find((h) => h.lock === 'm2')!.token).toBe(1);
    await lease.release();
  });

  it('RedLock: the majority view keeps owners on a quorum of nodes, with the count and TTL a majority has', () => {
    const a = { owner: 'a', holdCount: 1, ttl: 900 };
    const perNode = [[a], [{ ...a, ttl: 1_000 }], [{ owner: 'b', holdCount: 1, ttl: 500 }], [{ ...a, holdCount: 2, ttl: 700 }], []];
    expect(majorityHolders(perNode, 3)).toEqual([{ owner: 'a', holdCount: 1, ttl: 700 }]);
    expect(majorityHolders(perNode, 4)).toEqual([]);
  });

  it('works under an ioredis keyPrefix, and inspectLock tells the kinds apart by their keys', async () => {
    const conn = fx.redis({ keyPrefix: 'app:' });
    const locks = fx.client({}, conn);
    await locks.getLock('plain').lock();
    await locks.getFencedLock('fenced').lock();
    await locks.getReadWriteLock('rw').readLock().lock();
    expect(await locks.getLock('plain').getHolders()).toHaveLength(1);
    expect(await locks.getReadWriteLock('rw').readLock().getHolders()).toHaveLength(1);
    const kinds = await Promise.all(['plain', 'fenced', 'rw', 'none'].map((name) => inspectLock(new LockScripts(redisPortOf(conn, 'redis'), 'spec').inspect, fx.prefix, name)));
    expect(kinds.map((k) => k?.kind)).toEqual(['lock', 'fenced', 'read-write', undefined]);
    await Promise.all(['plain', 'fenced'].map((name) => locks.getLock(name).forceUnlock()));
    await locks.getReadWriteLock('rw').readLock().forceUnlock();
  });
});
