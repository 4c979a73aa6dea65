import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockAcquireTimeoutError, LockNotHeldError, MultiLock, type LockClient, type RLock } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';

describe('MultiLock', () => {
  const fx = useLockFixture();
  const multiOf = (locks: LockClient, ...names: string[]): MultiLock =>
    new MultiLock(...names.map((name) => locks.getLock(name)));
  const hashes = (...names: string[]): string[] => names.map((name) => `{${fx.prefix}:${name}}`);

  let second: SpawnedRedis;
  beforeAll(async () => {
    second = await spawnRedis();
  });
  afterAll(async () => {
    await second.stop();
  });

  it('takes all or none: with one member held elsewhere it gives up in time and holds nothing', async () => {
    const locks = fx.client();
    const other = fx.client().getLock('m-c');
    await other.lock(60_000);
    // m-c comes last in order: m-a and m-b are taken first, then let go.
    const multi = multiOf(locks, 'm-b', 'm-c', 'm-a');
    const started = performance.now();
    expect(await multi.tryLock(300, 10_000)).toBe(false);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(295);
    expect(elapsed).toBeLessThan(2_000);
    expect(await locks.getLock('m-a').isLocked()).toBe(false);
    expect(await locks.getLock('m-b').isLocked()).toBe(false);
    expect(await multi.isHeldByCurrentOwner()).toBe(false);
    expect(await multi.isLocked()).toBe(true);

    let ran = false;
    await expect(multi.withLock(() => (ran = true), { waitTime: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
    await expect(multi.acquire({ waitTime: 0 })).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT' });
    expect(ran).toBe(false);
    expect(await fx.keys()).toEqual(hashes('m-c'));

    // Once the member is free, the whole set is taken, and released as a whole.
    await other.unlock();
    expect(await multi.tryLock()).toBe(true);
    expect((await fx.keys()).sort()).toEqual(hashes('m-a', 'm-b', 'm-c'));
    await multi.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('two overlapping MultiLocks, members given in opposite orders, contend 200 rounds each without deadlock or overlap', async () => {
    const probe = fx.redis();
    const first = multiOf(fx.client(), 'x-a', 'x-b', 'x-c');
    const secondMulti = multiOf(fx.client(), 'x-d', 'x-c', 'x-b');
    let violations = 0;
    let rounds = 0;
    const run = async (multi: MultiLock, names: string[]): Promise<void> => {
      for (let round = 0; round < 200; round += 1) {
        // lock() waits without limit: a deadlock would hang here until the test times out.
        await multi.lock();
        try {
          const counts = await Promise.all(names.map((name) => probe.incr(`${fx.prefix}:probe:${name}`)));
          if (counts.some((count) => count !== 1)) violations += 1;
          await new Promise((resolve) => setImmediate(resolve));
          await Promise.all(names.map((name) => probe.decr(`${fx.prefix}:probe:${name}`)));
          rounds += 1;
        } finally {
          await multi.unlock();
        }
      }
    };
    await Promise.all([run(first, ['x-a', 'x-b', 'x-c']), run(secondMulti, ['x-d', 'x-c', 'x-b'])]);
    expect({ rounds, violations }).toEqual({ rounds: 400, violations: 0 });
    expect((await fx.keys()).every((key) => key.startsWith(`${fx.prefix}:probe:`))).toBe(true);
  }, 30_000);

  it('works across clients and servers', async () => {
    const here = fx.client();
    const there = fx.client({}, fx.redis({}, second.url));
    const multi = new MultiLock(here.getLock('s-1'), there.getLock('s-2'));
    const rival = new MultiLock(fx.client().getLock('s-1'), fx.client({}, fx.redis({}, second.url)).getLock('s-2'));
    const lease = await multi.acquire({ waitTime: 1_000 });
    expect(await here.getLock('s-1').isLocked()).toBe(true);
    expect(await there.getLock('s-2').isLocked()).toBe(true);
    expect(await rival.tryLock(100)).toBe(false);
    await lease.release();
    expect(await rival.tryLock()).toBe(true);
    await rival.unlock();
    expect(await fx.keys()).toEqual([]);
    expect(await fx.keys(fx.redis({}, second.url))).toEqual([]);
  });

  it('re-enters inside a context, and withLock callbacks nest', async () => {
    const locks = fx.client();
    const multi = multiOf(locks, 'r-a', 'r-b');
    await locks.runInContext(async () => {
      await multi.lock();
      await multi.lock();
      expect(await multi.getHoldCount()).toBe(2);
      expect(await locks.getLock('r-a').getHoldCount()).toBe(2);
      await multi.unlock();
      expect(await multi.isHeldByCurrentOwner()).toBe(true);
      await multi.unlock();
      expect(await multi.getHoldCount()).toBe(0);
    });
    const counts = await multi.withLock(async () => {
      const inner = await multi.withLock(() => multi.getHoldCount());
      // A member on its own re-enters too: same context, same owner.
      const member = await locks.getLock('r-b').withLock(() => locks.getLock('r-b').getHoldCount());
      return [inner, member, await multi.getHoldCount()];
    });
    expect(counts).toEqual([2, 2, 1]);
    expect(await fx.keys()).toEqual([]);
  });

  it('outside a context every call is a fresh owner, and unlock() releases this client\'s hold', async () => {
    const locks = fx.client();
    const multi = multiOf(locks, 'u-a', 'u-b');
    expect(await multi.tryLock()).toBe(true);
    expect(await multi.tryLock()).toBe(false);
    expect(await multi.isHeldByCurrentOwner()).toBe(true);
    // Another MultiLock over the same locks releases it, as getLock(name).unlock() would.
    await multiOf(locks, 'u-b', 'u-a').unlock();
    expect(await multi.isLocked()).toBe(false);
    await expect(multi.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await fx.keys()).toEqual([]);
  });

  it('withLock rethrows the callback error and releases every member', async () => {
    const multi = multiOf(fx.client(), 'e-a', 'e-b');
    await expect(
      multi.withLock(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await multi.isLocked()).toBe(false);
    expect(await fx.keys()).toEqual([]);
  });

  it('a Lease aborts its signal when any member is lost, and releases every member', async () => {
    const locks = fx.client({ watchdogTimeout: 300 });
    const multi = multiOf(locks, 'l-a', 'l-b');
    const lease = await multi.acquire();
    expect(lease.name).toBe('MultiLock(l-a, l-b)');
    expect(lease.owner.startsWith(`${locks.id}:`)).toBe(true);
    await fx.client().getLock('l-b').forceUnlock();
    for (let i = 0; i < 40 && !lease.signal.aborted; i += 1) await sleep(25);
    expect(lease.signal.reason).toMatchObject({ name: 'LockLostError', lockName: 'l-b' });
    expect(await locks.getLock('l-a').isLocked()).toBe(true);
    await lease.release();
    expect(await fx.keys()).toEqual([]);
  });

  it('an aborted wait lets go of the members already taken', async () => {
    const other = fx.client().getLock('a-b');
    await other.lock(60_000);
    const locks = fx.client();
    const controller = new AbortController();
    const waiting = multiOf(locks, 'a-a', 'a-b').tryLock(20_000, 10_000, { signal: controller.signal });
    await sleep(100);
    expect(await locks.getLock('a-a').isLocked()).toBe(true);
    controller.abort(new Error('no longer needed'));
    await expect(waiting).rejects.toThrow('no longer needed');
    expect(await locks.getLock('a-a').isLocked()).toBe(false);
    await other.unlock();
  });

  it('with a leaseTime, a set whose first lease ran out while waiting for the rest is taken again', async () => {
    const other = fx.client().getLock('f-b');
    await other.lock(400);
    const multi = multiOf(fx.client(), 'f-a', 'f-b');
    // f-a is taken first with a 200 ms lease, then f-b is waited for about 400 ms.
    expect(await multi.tryLock(3_000, 200)).toBe(true);
    // Both are held when it says so: f-a was taken again after f-b, not left to expire.
    for (const name of ['f-a', 'f-b']) expect(await fx.client().getLock(name).remainTimeToLive()).toBeGreaterThan(0);
    expect(await multi.remainTimeToLive()).toBeLessThanOrEqual(200);
    await multi.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('queries and forceUnlock cover every member', async () => {
    const locks = fx.client();
    const members: RLock[] = [locks.getLock('q-a'), locks.getFencedLock('q-b'), locks.getReadWriteLock('q-c').readLock()];
    const multi = new MultiLock(...members);
    expect(await multi.remainTimeToLive()).toBe(-2);
    expect(await multi.isLocked()).toBe(false);
    await members[1]!.lock(5_000);
    expect(await multi.isLocked()).toBe(true);
    expect(await multi.remainTimeToLive()).toBeLessThanOrEqual(5_000);
    await members[1]!.unlock();
    await locks.runInContext(() => multi.lock(8_000));
    expect(await multi.remainTimeToLive()).toBeGreaterThan(7_000);
    expect(await multi.forceUnlock()).toBe(true);
    expect(await multi.isLocked()).toBe(false);
    expect(await multi.forceUnlock()).toBe(false);
    expect(await fx.keys()).toEqual([`{${fx.prefix}:q-b}:token`]);
  });
});
