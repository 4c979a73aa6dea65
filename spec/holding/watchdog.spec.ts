import { describe, expect, it } from 'vitest';
import { LockLostError, type LockLostInfo } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('watchdog', () => {
  const fx = useLockFixture();

  it('keeps a lock taken without leaseTime alive past 3 × watchdogTimeout', async () => {
    const locks = fx.client({ watchdogTimeout: 600 });
    let renewed = 0;
    locks.on('renewed', () => (renewed += 1));
    const lock = locks.getLock('kept');
    await lock.lock();
    expect(await lock.remainTimeToLive()).toBeGreaterThan(400);
    await sleep(2_000);
    expect(await lock.isLocked()).toBe(true);
    expect(await lock.remainTimeToLive()).toBeGreaterThan(0);
    expect(renewed).toBeGreaterThanOrEqual(5);
    await lock.unlock();
    const after = renewed;
    await sleep(500);
    // Renewal stops with the last unlock.
    expect(renewed).toBe(after);
    expect(await fx.keys()).toEqual([]);
  });

  it('frees the lock within about watchdogTimeout when the holder disappears without unlock', async () => {
    const holderConn = fx.redis();
    const holder = fx.client({ watchdogTimeout: 600 }, holderConn);
    const lost: LockLostInfo[] = [];
    holder.on('lost', (info) => lost.push(info));
    await holder.getLock('crash').lock();
    // Cut the holder's connection: no unlock, no renewal.
    holderConn.disconnect();
    const started = performance.now();
    expect(await fx.client().getLock('crash').tryLock(5_000, 1_000)).toBe(true);
    expect(performance.now() - started).toBeLessThan(600 + 500);
    // The holder finds out too: renewal kept failing until the lease must have run out.
    for (let i = 0; i < 40 && lost.length === 0; i += 1) await sleep(50);
    expect(lost).toEqual([expect.objectContaining({ name: 'crash', reason: 'expired' })]);
  });

  it('reports a lock deleted behind the holder: `lost` and an aborted lease signal', async () => {
    const locks = fx.client({ watchdogTimeout: 300 });
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    const lease = await locks.getLock('deleted').acquire();
    await fx.redis().del(`{${fx.prefix}:deleted}`);
    for (let i = 0; i < 40 && !lease.signal.aborted; i += 1) await sleep(25);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
    expect(lease.signal.reason).toMatchObject({ reason: 'deleted', lockName: 'deleted' });
    expect(lost).toEqual([{ name: 'deleted', owner: lease.owner, reason: 'deleted' }]);
    // Releasing a lease that is known lost is no error.
    await lease.release();
  });

  it('reports a lock taken by another owner after its key vanished', async () => {
    const locks = fx.client({ watchdogTimeout: 300 });
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    const lease = await locks.getLock('taken').acquire();
    await fx.redis().del(`{${fx.prefix}:taken}`);
    expect(await fx.client().getLock('taken').tryLock(0, 10_000)).toBe(true);
    for (let i = 0; i < 40 && lost.length === 0; i += 1) await sleep(25);
    expect(lost).toEqual([{ name: 'taken', owner: lease.owner, reason: 'taken' }]);
    expect(lease.signal.reason).toMatchObject({ reason: 'taken' });
  });

  it('never reports a loss when a renewal races a release', async () => {
    // Renewals (every 50 ms) against short lock/unlock cycles: a renewal may still be out when
    // its hold is released and re-taken by a new hold. An answer for a hold that is no longer
    // current is no loss. The lease leaves the holder's clock (lease - 1% - 25 ms) room for a
    // loaded machine's stalls: with 60 ms it had 34 ms, a slow acquisition used it all up, and
    // unlock() then rightly gave up waiting for its answer (LockRedisError).
    const locks = fx.client({ watchdogTimeout: 150 });
    const lost: LockLostInfo[] = [];
    let renewed = 0;
    locks.on('lost', (info) => lost.push(info));
    locks.on('renewed', () => (renewed += 1));
    const lock = locks.getLock('race');
    for (let i = 0; i < 10_000 && (i < 1_000 || renewed < 10); i += 1) {
      await lock.lock();
      // Held across a timer phase, so that the watchdog's tick finds it held.
      await sleep(1);
      await lock.unlock();
    }
    await sleep(50);
    expect(lost).toEqual([]);
    expect(renewed, 'renewals raced the cycles').toBeGreaterThanOrEqual(10);
  });

  it('signals the end of a fixed lease on the Lease', async () => {
    const locks = fx.client();
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    const lease = await locks.getLock('fixed').acquire({ leaseTime: 150 });
    expect(lease.signal.aborted).toBe(false);
    await sleep(250);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'expired' });
    expect(lost).toEqual([{ name: 'fixed', owner: lease.owner, reason: 'expired' }]);
    await lease.release();
  });

  it('one timer renews many held locks in one batched call', async () => {
    const locks = fx.client({ watchdogTimeout: 900 });
    let renewed = 0;
    locks.on('renewed', () => (renewed += 1));
    const leases = await Promise.all(Array.from({ length: 250 }, (_, i) => locks.getLock(`many-${i}`).acquire()));
    await sleep(1_000);
    // 250 locks, three ticks at most in that time: every lock renewed in every tick.
    expect(renewed % 250).toBe(0);
    expect(renewed).toBeGreaterThanOrEqual(500);
    await Promise.all(leases.map((lease) => lease.release()));
    expect(await fx.keys()).toEqual([]);
  });
});
