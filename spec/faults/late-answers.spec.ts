import { describe, expect, it } from 'vitest';
import { LockAcquireTimeoutError, MultiLock } from '../../lib/index.js';
import { freezeFor, sleep, until } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// Answers that come too late, or never: a single attempt has a time limit too; an acquisition
// whose answer arrives after its own lease ran out is no acquisition; a MultiLock never resolves
// with a member that was lost while it waited for the others. (Found by the torture run.)
describe('late answers', () => {
  const rig = useFaultRig();

  it('tryLock(0) on a silent connection gives up within its attempt limit (1 s)', async () => {
    const lock = rig.client(rig.lockConnect('proxy')).getLock('silent');
    rig.proxy.blackhole();
    const started = performance.now();
    const outcome = await lock.tryLock(0, 10_000).catch((error: unknown) => error);
    const elapsed = performance.now() - started;
    rig.proxy.heal();
    expect(outcome).toBe(false);
    expect(elapsed).toBeLessThan(1_000 + 300);
    // The attempt that reached Redis after all was undone: the lock is free.
    const rival = rig.client(rig.lockConnect('direct')).getLock('silent');
    expect(await rival.tryLock(2_000, 10_000)).toBe(true);
  });

  it('an acquisition answered after its own lease ran out does not count', async () => {
    const lock = rig.client(rig.lockConnect('proxy')).getLock('slow');
    // Scripts loaded before the answers slow down.
    expect(await lock.tryLock(0, 500)).toBe(true);
    await lock.unlock();
    // Every answer comes 700 ms late; a lease of 500 ms has run out by then.
    rig.proxy.latency({ down: 700 });
    const started = performance.now();
    const outcome = await lock.acquire({ waitTime: 3_000, leaseTime: 500 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(LockAcquireTimeoutError);
    expect(performance.now() - started).toBeLessThan(3_000 + 1_000);
    rig.proxy.latency({});
    // Nothing was left held: each late grant was released again.
    const rival = rig.client(rig.lockConnect('direct')).getLock('slow');
    expect(await rival.tryLock(2_000, 10_000)).toBe(true);
  });

  it('a re-entry sent just before the clock ends its hold is asked again: the let-go of that hold may remove it', async () => {
    const locks = rig.client(rig.lockConnect('direct'), { watchdogTimeout: 300 });
    locks.on('lost', () => undefined);
    const lock = locks.getLock('frozen');
    const rival = rig.client(rig.lockConnect('direct')).getLock('frozen');
    await locks.runInContext(async () => {
      await lock.lock();
      // The process freezes (as under SIGSTOP) past the lease: the key expires in Redis, and
      // neither the watchdog nor the holder's clock can run.
      freezeFor(700);
      // First thing after the freeze, before the clock's timer ends the hold (and lets go of it
      // in Redis for this owner): the same owner asks again.
      expect(await lock.tryLock(2_000, 10_000)).toBe(true);
      // What it believes it holds, it holds: nobody else gets the lock.
      expect(await rival.tryLock(0, 10_000)).toBe(false);
      await lock.unlock();
    });
    expect(await rival.tryLock(0, 10_000)).toBe(true);
  });

  it('a re-entry asked after a blocked loop outran its hold\'s clock is judged by that clock first: the holder is told, the lock taken afresh', async () => {
    const locks = rig.client(rig.lockConnect('direct'));
    const lost: string[] = [];
    locks.on('lost', (info) => lost.push(info.reason));
    const lock = locks.getLock('outran');
    const rival = rig.client(rig.lockConnect('direct')).getLock('outran');
    await locks.runInContext(async () => {
      const lease = await lock.acquire({ leaseTime: 300 });
      // The loop is blocked past the fixed lease: the key expires in Redis, the clock's timer waits.
      freezeFor(600);
      // First thing after the block, one attempt (no wait, so no second try): a free lock is taken.
      const again = lock.tryLock(0, 10_000);
      // The old hold was judged before the attempt went out, not when its timer came round.
      expect(lost).toEqual(['expired']);
      expect(lease.signal.aborted).toBe(true);
      expect(await again).toBe(true);
      expect(await lock.getHoldCount()).toBe(1);
      expect(await rival.tryLock(0, 10_000)).toBe(false);
      // One unlock for the one hold Redis has: the lock is free.
      await lock.unlock();
    });
    expect(await rig.admin.exists(rig.key('outran'))).toBe(0);
    expect(await rival.tryLock(0, 10_000)).toBe(true);
  });

  it('a hold the clock ended is let go in Redis too: taking the lock again is a fresh hold, not a re-entry', async () => {
    const locks = rig.client(rig.lockConnect('proxy'), { watchdogTimeout: 1_500 });
    const lost: string[] = [];
    locks.on('lost', (info) => lost.push(info.reason));
    const lock = locks.getLock('ended');
    await locks.runInContext(async () => {
      await lock.lock();
      // Renewals keep running in Redis, but their answers come too late for the holder's clock.
      rig.proxy.latency({ down: 2_500 });
      await until(() => lost.length > 0, 3_000);
      expect(lost).toEqual(['expired']);
      // At once, while Redis may still keep the renewed hold: the same owner takes the lock again.
      await lock.lock(10_000);
      rig.proxy.latency({});
      // One hold, released by one unlock: the lock is free.
      await lock.unlock();
    });
    expect(await rig.admin.exists(rig.key('ended'))).toBe(0);
  });

  it('a MultiLock never resolves with a member that was lost while it waited for another', async () => {
    const locks = rig.client(rig.lockConnect('direct'), { watchdogTimeout: 600 });
    locks.on('lost', () => undefined);
    const blocker = rig.client(rig.lockConnect('direct')).getLock('m-b');
    await blocker.lock(1_500);
    const multi = new MultiLock(locks.getLock('m-a'), locks.getLock('m-b'));
    const pending = multi.acquire({ waitTime: 10_000 });
    await sleep(200);
    // m-a (taken first) is deleted under the waiting MultiLock: its next renewal finds it gone.
    expect(await rig.admin.del(rig.key('m-a'))).toBe(1);
    const lease = await pending;
    expect(lease.signal.aborted).toBe(false);
    expect(await locks.getLock('m-a').isLocked()).toBe(true);
    await lease.release();
  });

  it('an aborted MultiLock wait ends at the abort, not when its budget would have run out', async () => {
    const locks = rig.client(rig.lockConnect('proxy'));
    locks.on('error', () => undefined);
    const blocker = rig.client(rig.lockConnect('direct')).getLock('ab-b');
    await blocker.lock(10_000);
    const multi = new MultiLock(locks.getLock('ab-a'), locks.getLock('ab-b'));
    const controller = new AbortController();
    const pending = multi.acquire({ waitTime: 8_000, signal: controller.signal }).catch((error: unknown) => error);
    // ab-a taken, ab-b waited for; then the connection goes silent: letting go of ab-a gets no answer.
    await until(async () => (await rig.admin.exists(rig.key('ab-a'))) === 1);
    // Its answer (and ab-b's first attempt's) back at the client before the silence.
    await sleep(300);
    rig.proxy.blackhole();
    controller.abort(new Error('gave up'));
    const aborted = performance.now();
    const outcome = await pending;
    const late = performance.now() - aborted;
    rig.proxy.heal();
    expect(outcome).toMatchObject({ message: 'gave up' });
    expect(late).toBeLessThan(500);
    await blocker.unlock();
  });
});
