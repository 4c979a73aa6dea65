import { describe, expect, it } from 'vitest';
import { LockAcquireTimeoutError } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('RLock: waiting', () => {
  const fx = useLockFixture();

  it('tryLock(wait) gets the lock on release, long before the holder would expire', async () => {
    const holder = fx.client().getLock('w');
    const waiter = fx.client().getLock('w');
    expect(await holder.tryLock(0, 60_000)).toBe(true);
    const started = performance.now();
    const waiting = waiter.tryLock(30_000, 10_000);
    await sleep(100);
    await holder.unlock();
    expect(await waiting).toBe(true);
    // Woken by the release notice: the holder's 60 s TTL and the 30 s budget are far away.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('tryLock(wait) gives up when the wait runs out', async () => {
    const holder = fx.client().getLock('busy');
    const waiter = fx.client().getLock('busy');
    await holder.lock(60_000);
    const started = performance.now();
    expect(await waiter.tryLock(300, 1_000)).toBe(false);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(295);
    expect(elapsed).toBeLessThan(1_300);
    await holder.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('a fixed lease expires and the lock frees by itself', async () => {
    const lock = fx.client().getLock('lease');
    await lock.lock(200);
    const ttl = await lock.remainTimeToLive();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(200);
    await sleep(300);
    expect(await lock.isLocked()).toBe(false);
    expect(await lock.remainTimeToLive()).toBe(-2);
    expect(await fx.client().getLock('lease').tryLock()).toBe(true);
  });

  it('a waiter wakes when the holder expires without any notice', async () => {
    await fx.client().getLock('exp').lock(300);
    const started = performance.now();
    expect(await fx.client().getLock('exp').tryLock(5_000, 1_000)).toBe(true);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(200);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('lock() waits without limit until the release', async () => {
    const holder = fx.client().getLock('forever');
    await holder.lock();
    let done = false;
    const waiting = fx
      .client()
      .getLock('forever')
      .lock()
      .then(() => (done = true));
    await sleep(150);
    expect(done).toBe(false);
    await holder.unlock();
    await waiting;
    expect(done).toBe(true);
  });

  it('signal aborts a wait with its reason and leaves no waiter behind', async () => {
    const holder = fx.client().getLock('abort');
    await holder.lock(60_000);
    const controller = new AbortController();
    const waiting = fx.client().getLock('abort').tryLock(30_000, 1_000, { signal: controller.signal });
    await sleep(50);
    controller.abort(new Error('stop waiting'));
    await expect(waiting).rejects.toThrow('stop waiting');
    await sleep(50);
    expect(await fx.keys()).toEqual([`{${fx.prefix}:abort}`]);
    await holder.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('an already aborted signal rejects before anything is sent', async () => {
    const lock = fx.client().getLock('pre-aborted');
    await expect(lock.tryLock({ waitTime: 100, signal: AbortSignal.abort(new Error('no')) })).rejects.toThrow('no');
    expect(await lock.isLocked()).toBe(false);
  });

  it('withLock and acquire reject with LockAcquireTimeoutError when the wait runs out', async () => {
    await fx.client().getLock('timeout').lock(60_000);
    const lock = fx.client().getLock('timeout');
    let ran = false;
    await expect(lock.withLock(() => (ran = true), { waitTime: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
    await expect(lock.acquire({ waitTime: 50 })).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT', lockName: 'timeout' });
    expect(ran).toBe(false);
  });

  it('many waiters across clients each get the lock in turn, with no key left', async () => {
    const clients = Array.from({ length: 4 }, () => fx.client());
    const holder = clients[0]!.getLock('turns');
    await holder.lock();
    const order: number[] = [];
    const waiters = Array.from({ length: 12 }, async (_, i) => {
      const lock = clients[i % 4]!.getLock('turns');
      expect(await lock.tryLock(20_000, 5_000)).toBe(true);
      order.push(i);
      await sleep(2);
      await lock.unlock();
    });
    await sleep(50);
    await holder.unlock();
    await Promise.all(waiters);
    expect(order.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(await fx.keys()).toEqual([]);
  });
});
