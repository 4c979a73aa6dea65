import { describe, expect, it } from 'vitest';
import { LockNotHeldError, LockUpgradeError, type LockEventInfo, type LockLostInfo } from '../../lib/index.js';
import { contendReadWrite } from '../helpers/contend-read-write.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('read-write lock', () => {
  const fx = useLockFixture();
  const probeKeys = (): string[] => [`${fx.prefix}:probe:readers`, `${fx.prefix}:probe:writers`];

  it('readers share, a writer excludes everyone: 21 tasks × 10 rounds in one process', async () => {
    const rw = fx.client().getReadWriteLock('tasks');
    const result = await contendReadWrite(() => rw, fx.redis(), `${fx.prefix}:probe`, 21, 10);
    expect(result).toMatchObject({ reads: 140, writes: 70, violations: 0 });
    expect(result.maxReaders).toBeGreaterThan(1);
    expect((await fx.keys()).sort()).toEqual(probeKeys());
  });

  it('readers share, a writer excludes everyone: 21 tasks × 10 rounds over 4 clients', async () => {
    const clients = Array.from({ length: 4 }, () => fx.client());
    const result = await contendReadWrite(
      (task) => clients[task % 4]!.getReadWriteLock('clients'),
      fx.redis(),
      `${fx.prefix}:probe`,
      21,
      10,
    );
    expect(result).toMatchObject({ reads: 140, writes: 70, violations: 0 });
    expect(result.maxReaders).toBeGreaterThan(1);
    expect((await fx.keys()).sort()).toEqual(probeKeys());
  });

  it('both sides are reentrant per owner, and exclude other owners', async () => {
    const locks = fx.client();
    const rw = locks.getReadWriteLock('reentrant');
    await locks.runInContext(async () => {
      await rw.writeLock().lock();
      await rw.writeLock().lock();
      expect(await rw.writeLock().getHoldCount()).toBe(2);
      expect(await locks.runInContext(() => rw.writeLock().tryLock())).toBe(false);
      expect(await locks.runInContext(() => rw.readLock().tryLock())).toBe(false);
      await rw.writeLock().unlock();
      expect(await rw.writeLock().isLocked()).toBe(true);
      await rw.writeLock().unlock();
      expect(await rw.writeLock().isLocked()).toBe(false);

      await rw.readLock().lock();
      await rw.readLock().lock();
      expect(await rw.readLock().getHoldCount()).toBe(2);
      expect(await locks.runInContext(() => rw.writeLock().tryLock())).toBe(false);
      await rw.readLock().unlock();
      await rw.readLock().unlock();
      await expect(rw.readLock().unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    });
    expect(await fx.keys()).toEqual([]);
  });

  it('the writer may take the read lock and keeps reading after its write unlock (downgrade)', async () => {
    const locks = fx.client();
    const rw = locks.getReadWriteLock('downgrade');
    // Another owner (contexts nest: a new one inside is another owner).
    const other = <T>(fn: (other: typeof rw) => Promise<T>): Promise<T> =>
      locks.runInContext(() => fn(fx.client().getReadWriteLock('downgrade')));
    await locks.runInContext(async () => {
      await rw.writeLock().lock();
      await rw.readLock().lock();
      expect(await other((o) => o.readLock().tryLock())).toBe(false);
      await rw.writeLock().unlock();
      // Still reading: other readers may join now, a writer may not.
      expect(await rw.readLock().getHoldCount()).toBe(1);
      expect(await rw.writeLock().isLocked()).toBe(false);
      expect(
        await other(async (o) => {
          const read = await o.readLock().tryLock();
          await o.readLock().unlock();
          return read;
        }),
      ).toBe(true);
      expect(await other((o) => o.writeLock().tryLock())).toBe(false);
      await rw.readLock().unlock();
    });
    expect(await rw.writeLock().tryLock()).toBe(true);
    await rw.writeLock().unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('asking for the write lock while holding only the read lock fails at once (LockUpgradeError)', async () => {
    const locks = fx.client();
    const rw = locks.getReadWriteLock('upgrade');
    await locks.runInContext(async () => {
      await rw.readLock().lock();
      const started = performance.now();
      await expect(rw.writeLock().tryLock(10_000)).rejects.toBeInstanceOf(LockUpgradeError);
      await expect(rw.writeLock().lock()).rejects.toMatchObject({ code: 'LOCK_UPGRADE', lockName: 'upgrade' });
      await expect(rw.writeLock().withLock(() => 1, { waitTime: 10_000 })).rejects.toBeInstanceOf(LockUpgradeError);
      // No waiting at all: the budget (10 s) and an unlimited lock() would both have hung.
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(await rw.readLock().getHoldCount()).toBe(1);
      expect(await rw.writeLock().isLocked()).toBe(false);
      await rw.readLock().unlock();
      // Without the read hold the same owner may write.
      expect(await rw.writeLock().tryLock()).toBe(true);
      await rw.writeLock().unlock();
    });
    expect(await fx.keys()).toEqual([]);
  });

  it('each reader keeps its own lease: a short reader ending does not cut a long one', async () => {
    const rw = fx.client().getReadWriteLock('leases');
    const writer = fx.client().getReadWriteLock('leases').writeLock();
    const long = await rw.readLock().acquire({ leaseTime: 5_000 });
    const short = await rw.readLock().acquire({ leaseTime: 300 });
    expect(short.owner).not.toBe(long.owner);
    // The short lease joined later: the lock still lives as long as the long one.
    expect(await rw.readLock().remainTimeToLive()).toBeGreaterThan(4_000);
    await sleep(500);
    expect(short.signal.aborted).toBe(true);
    expect(await rw.readLock().isLocked()).toBe(true);
    expect(await rw.readLock().remainTimeToLive()).toBeGreaterThan(3_500);
    expect(await writer.tryLock()).toBe(false);
    // The long reader leaves: the expired short one does not keep the writer out.
    await long.release();
    expect(await writer.tryLock()).toBe(true);
    await writer.unlock();
    await short.release();
    expect(await fx.keys()).toEqual([]);
  });

  it("an owner's holds share its lease: a short re-entry extends it, never shortens it", async () => {
    const locks = fx.client();
    const rw = locks.getReadWriteLock('re-entry');
    await locks.runInContext(async () => {
      await rw.readLock().lock(2_000);
      await rw.readLock().lock(200);
      await sleep(400);
      expect(await rw.readLock().getHoldCount()).toBe(2);
      expect(await rw.readLock().remainTimeToLive()).toBeGreaterThan(1_000);
      await rw.readLock().unlock();
      await rw.readLock().unlock();
    });
    await locks.runInContext(async () => {
      await rw.writeLock().lock(2_000);
      await rw.writeLock().lock(200);
      await sleep(400);
      expect(await rw.writeLock().getHoldCount()).toBe(2);
      await rw.writeLock().unlock();
      await rw.writeLock().unlock();
    });
    expect(await fx.keys()).toEqual([]);
  });

  it('the watchdog renews read and write holds, and stops at the last unlock', async () => {
    const locks = fx.client({ watchdogTimeout: 600 });
    const renewed: string[] = [];
    locks.on('renewed', (info) => renewed.push(info.name));
    const reader = locks.getReadWriteLock('kept-read').readLock();
    const writer = locks.getReadWriteLock('kept-write').writeLock();
    await reader.lock();
    await writer.lock();
    await sleep(1_800);
    // Three leases later both are held, renewed in every tick.
    expect(await reader.remainTimeToLive()).toBeGreaterThan(0);
    expect(await writer.remainTimeToLive()).toBeGreaterThan(0);
    expect(renewed.filter((name) => name === 'kept-read').length).toBeGreaterThanOrEqual(4);
    expect(renewed.filter((name) => name === 'kept-write').length).toBeGreaterThanOrEqual(4);
    await reader.unlock();
    await writer.unlock();
    const after = renewed.length;
    await sleep(400);
    expect(renewed.length).toBe(after);
    expect(await fx.keys()).toEqual([]);
  });

  it('a dead reader expires on its own while another keeps reading, and then keeps nobody out', async () => {
    const deadConn = fx.redis();
    const dead = fx.client({ watchdogTimeout: 600 }, deadConn);
    dead.on('error', () => undefined);
    await dead.getReadWriteLock('dead').readLock().lock();
    const reader = fx.client().getReadWriteLock('dead').readLock();
    await reader.lock(20_000);
    // The first reader's process "dies": no unlock, no renewal.
    deadConn.disconnect();
    const writer = fx.client().getReadWriteLock('dead').writeLock();
    const writing = writer.tryLock(10_000, 5_000);
    await sleep(1_200);
    expect(await reader.isLocked()).toBe(true);
    const released = performance.now();
    await reader.unlock();
    // The release found no live reader left and woke the writer: its dead hold was dropped, not
    // counted (the live reader's 20 s lease would otherwise bound the writer's sleep).
    expect(await writing).toBe(true);
    expect(performance.now() - released).toBeLessThan(3_000);
    await writer.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('a write release wakes every waiting reader at once, across clients', async () => {
    const writer = fx.client().getReadWriteLock('wake-readers').writeLock();
    await writer.lock(60_000);
    const clients = Array.from({ length: 3 }, () => fx.client());
    let inside = 0;
    let allInside!: () => void;
    const together = new Promise<void>((resolve) => (allInside = resolve));
    const readers = Array.from({ length: 9 }, async (_, i) => {
      const reader = clients[i % 3]!.getReadWriteLock('wake-readers').readLock();
      expect(await reader.tryLock(20_000, 20_000)).toBe(true);
      inside += 1;
      if (inside === 9) allInside();
      // Nobody leaves before all nine are in: they hold the lock together.
      await Promise.race([together, sleep(10_000)]);
      await reader.unlock();
    });
    await sleep(200);
    const released = performance.now();
    await writer.unlock();
    await together;
    // Woken by notices: the writer's 60 s lease and the readers' 20 s budget are far away.
    expect(performance.now() - released).toBeLessThan(3_000);
    await Promise.all(readers);
    expect(await fx.keys()).toEqual([]);
  });

  it('a read release that frees the lock wakes a waiting writer', async () => {
    const locks = fx.client();
    const rw = locks.getReadWriteLock('wake-writer');
    const first = await rw.readLock().acquire({ leaseTime: 60_000 });
    const second = await rw.readLock().acquire({ leaseTime: 60_000 });
    const writer = fx.client().getReadWriteLock('wake-writer').writeLock();
    let wrote = false;
    const writing = writer.tryLock(20_000, 10_000).then((got) => (wrote = got));
    await sleep(100);
    await first.release();
    await sleep(100);
    expect(wrote).toBe(false);
    const released = performance.now();
    await second.release();
    expect(await writing).toBe(true);
    expect(performance.now() - released).toBeLessThan(3_000);
    await writer.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('queries, events and forceUnlock answer per side', async () => {
    const locks = fx.client();
    const events: [string, LockEventInfo][] = [];
    locks.on('acquired', (info) => events.push(['acquired', info]));
    locks.on('released', (info) => events.push(['released', info]));
    const rw = locks.getReadWriteLock('sides');
    expect(rw.name).toBe('sides');
    expect(await rw.readLock().remainTimeToLive()).toBe(-2);
    await rw.readLock().lock(10_000);
    expect(await rw.readLock().isLocked()).toBe(true);
    expect(await rw.writeLock().isLocked()).toBe(false);
    expect(await rw.writeLock().remainTimeToLive()).toBe(-2);
    expect(await rw.writeLock().forceUnlock()).toBe(false);
    expect(await rw.readLock().forceUnlock()).toBe(true);
    expect(await rw.readLock().isLocked()).toBe(false);

    const lease = await rw.writeLock().acquire({ leaseTime: 10_000 });
    expect(await rw.writeLock().remainTimeToLive()).toBeGreaterThan(9_000);
    expect(await rw.readLock().forceUnlock()).toBe(false);
    expect(await rw.writeLock().forceUnlock()).toBe(true);
    expect(await fx.keys()).toEqual([]);
    await expect(lease.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(events.map(([kind, info]) => `${kind} ${info.name}`)).toEqual(['acquired sides', 'acquired sides']);
  });

  it('a read hold deleted behind its holder is reported lost', async () => {
    const locks = fx.client({ watchdogTimeout: 300 });
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    const lease = await locks.getReadWriteLock('lost').readLock().acquire();
    await fx.client().getReadWriteLock('lost').readLock().forceUnlock();
    for (let i = 0; i < 40 && !lease.signal.aborted; i += 1) await sleep(25);
    expect(lease.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'deleted' });
    expect(lost).toEqual([{ name: 'lost', owner: lease.owner, reason: 'deleted' }]);
    await lease.release();
  });

  it('unscoped readers of one client each get their own hold, released latest first', async () => {
    const reader = fx.client().getReadWriteLock('unscoped').readLock();
    expect(await reader.tryLock()).toBe(true);
    expect(await reader.tryLock()).toBe(true);
    expect(await reader.getHoldCount()).toBe(1);
    await reader.unlock();
    expect(await reader.isLocked()).toBe(true);
    await reader.unlock();
    expect(await reader.isLocked()).toBe(false);
    await expect(reader.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await fx.keys()).toEqual([]);
  });
});
