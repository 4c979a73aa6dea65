import { describe, expect, it } from 'vitest';
import { LockNotHeldError } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('RLock: reentrancy and ownership', () => {
  const fx = useLockFixture();

  it('re-enters inside runInContext: hold count 2 → 1 → released', async () => {
    const locks = fx.client();
    const lock = locks.getLock('ctx');
    await locks.runInContext(async () => {
      await lock.lock();
      await lock.lock();
      expect(await lock.getHoldCount()).toBe(2);
      await lock.unlock();
      expect(await lock.getHoldCount()).toBe(1);
      expect(await lock.isLocked()).toBe(true);
      await lock.unlock();
      expect(await lock.getHoldCount()).toBe(0);
    });
    expect(await lock.isLocked()).toBe(false);
    expect(await fx.keys()).toEqual([]);
  });

  it('re-enters inside withLock callbacks, also after awaits', async () => {
    const lock = fx.client().getLock('with');
    const counts = await lock.withLock(async () => {
      await sleep(5);
      const outer = await lock.getHoldCount();
      const inner = await lock.withLock(() => lock.getHoldCount());
      return [outer, inner, await lock.getHoldCount()];
    });
    expect(counts).toEqual([1, 2, 1]);
    expect(await lock.isLocked()).toBe(false);
  });

  it('rejects unlock by a non-holder and keeps the lock held', async () => {
    const locks = fx.client();
    const lock = locks.getLock('held');
    await locks.runInContext(() => lock.lock());
    await expect(locks.runInContext(() => lock.unlock())).rejects.toBeInstanceOf(LockNotHeldError);
    await expect(lock.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    await expect(fx.client().getLock('held').unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await lock.isLocked()).toBe(true);
    expect(await lock.remainTimeToLive()).toBeGreaterThan(0);
  });

  it('unscoped calls get a fresh owner each: not reentrant, mutually exclusive', async () => {
    const lock = fx.client().getLock('unscoped');
    expect(await lock.tryLock()).toBe(true);
    expect(await lock.tryLock()).toBe(false);
    expect(await lock.isHeldByCurrentOwner()).toBe(true);
    await lock.unlock();
    expect(await lock.isLocked()).toBe(false);
    await expect(lock.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('sibling tasks started from one context-less caller never share an owner', async () => {
    const lock = fx.client().getLock('siblings');
    // Had a context leaked into the caller (enterWith), the second task would re-enter.
    const first = (async () => lock.tryLock())();
    const second = (async () => lock.tryLock())();
    expect((await Promise.all([first, second])).filter(Boolean)).toHaveLength(1);
  });

  it('separate contexts exclude each other; the context survives a wait and a wake-up', async () => {
    const locks = fx.client();
    const lock = locks.getLock('contexts');
    await locks.runInContext(() => lock.lock());
    const waiter = locks.runInContext(async () => {
      const got = await lock.tryLock(5_000);
      // Still the same owner after sleeping in the waiter queue: this re-enters.
      const reentered = await lock.tryLock();
      const count = await lock.getHoldCount();
      await lock.unlock();
      await lock.unlock();
      return { got, reentered, count };
    });
    await sleep(30);
    expect(await locks.runInContext(() => lock.tryLock())).toBe(false);
    await lock.forceUnlock();
    expect(await waiter).toEqual({ got: true, reentered: true, count: 2 });
  });

  it('a withLock callback error is rethrown and the lock is released', async () => {
    const lock = fx.client().getLock('throws');
    await expect(
      lock.withLock(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await lock.isLocked()).toBe(false);
  });

  it('acquire() returns a Lease released by await using, once', async () => {
    const lock = fx.client().getLock('lease');
    {
      await using lease = await lock.acquire({ leaseTime: 10_000 });
      expect(lease.name).toBe('lease');
      expect(lease.signal.aborted).toBe(false);
      expect(await lock.isLocked()).toBe(true);
    }
    expect(await lock.isLocked()).toBe(false);
    const lease = await lock.acquire();
    await Promise.all([lease.release(), lease.release()]);
    await lease.release();
    expect(await lock.isLocked()).toBe(false);
  });
});
