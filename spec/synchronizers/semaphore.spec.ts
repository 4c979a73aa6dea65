import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockClientClosedError,
  LockLostError,
  LockRedisError,
  type Permit,
} from '../../lib/index.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';

describe('semaphore', () => {
  const fx = useLockFixture();

  it('never has more than `permits` out: 40 concurrent tasks, 2 clients, mixed request sizes', async () => {
    const clients = [fx.client(), fx.client()];
    const probe = fx.redis();
    const key = `${fx.prefix}:inside`;
    let maxInside = 0;
    let entries = 0;
    let violations = 0;
    await Promise.all(
      Array.from({ length: 40 }, async (_, task) => {
        const sem = clients[task % 2]!.getSemaphore('s', { permits: 5 });
        const need = (task % 3) + 1;
        for (let round = 0; round < 5; round += 1) {
          await sem.withPermit(
            async () => {
              const inside = await probe.incrby(key, need);
              if (inside > 5) violations += 1;
              maxInside = Math.max(maxInside, inside);
              await sleep(1);
              await probe.decrby(key, need);
              entries += 1;
            },
            { permits: need, waitTime: 20_000 },
          );
        }
      }),
    );
    expect(violations).toBe(0);
    expect(entries).toBe(200);
    expect(maxInside).toBeGreaterThan(1);
    expect(await clients[0]!.getSemaphore('s', { permits: 5 }).availablePermits()).toBe(5);
    expect(await fx.keys()).toEqual([`${fx.prefix}:inside`]);
  }, 60_000);

  it('tryAcquire, multi-permit requests, availablePermits, idempotent release', async () => {
    const locks = fx.client();
    const sem = locks.getSemaphore('s', { permits: 3 });
    expect(await sem.availablePermits()).toBe(3);
    const two = await sem.tryAcquire({ permits: 2 });
    expect(two).not.toBeNull();
    expect(two!.permits).toBe(2);
    expect(typeof two!.id).toBe('string');
    expect(await sem.availablePermits()).toBe(1);
    expect(await sem.tryAcquire({ permits: 2 })).toBeNull();
    const one = await sem.tryAcquire();
    expect(one).not.toBeNull();
    expect(await sem.tryAcquire()).toBeNull();
    await two!.release();
    await two!.release();
    expect(await sem.availablePermits()).toBe(2);
    await expect(sem.acquire({ permits: 3, waitTime: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
    await one!.release();
    {
      await using all = await sem.acquire({ permits: 3 });
      expect(all.permits).toBe(3);
      expect(await sem.availablePermits()).toBe(0);
    }
    expect(await sem.availablePermits()).toBe(3);
    expect(await fx.keys()).toEqual([]);
  });

  it('a release wakes a waiter in another client at once', async () => {
    const sem = fx.client().getSemaphore('s', { permits: 2 });
    const held = await sem.acquire({ permits: 2, leaseTime: 60_000 });
    const waiting = fx.client().getSemaphore('s', { permits: 2 }).acquire({ permits: 2, waitTime: 10_000 });
    await sleep(100);
    const released = performance.now();
    await held.release();
    const permit = await waiting;
    expect(performance.now() - released).toBeLessThan(500);
    await permit.release();
  });

  it('watchdog renews permits beyond the watchdog timeout; a fixed lease aborts the signal before it ends', async () => {
    const locks = fx.client({ watchdogTimeout: 600 });
    const sem = locks.getSemaphore('s', { permits: 1 });
    const renewed = await sem.acquire();
    await sleep(1_500);
    expect(renewed.signal.aborted).toBe(false);
    expect(await sem.tryAcquire()).toBeNull();
    await renewed.release();

    const fixed = await sem.acquire({ leaseTime: 400 });
    const lostAt = new Promise<number>((resolve) => fixed.signal.addEventListener('abort', () => resolve(performance.now())));
    const rival = fx.client().getSemaphore('s', { permits: 1 });
    const took = (async () => {
      const permit = await rival.acquire({ waitTime: 5_000 });
      const at = performance.now();
      await permit.release();
      return at;
    })();
    const [lost, taken] = await Promise.all([lostAt, took]);
    expect(fixed.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost).toBeLessThan(taken);
    await fixed.release(); // after loss: resolves, changes nothing
    expect(await sem.availablePermits()).toBe(1);
  });

  it('close() rejects waiting calls and aborts renewed permits', async () => {
    const holder = fx.client();
    const held = await holder.getSemaphore('s', { permits: 1 }).acquire();
    const waiter = fx.client();
    const waiting = waiter.getSemaphore('s', { permits: 1 }).acquire();
    const fairWaiting = waiter.getSemaphore('f', { permits: 1, fair: true }).acquire({ waitTime: 10_000 });
    const fairHolder = await holder.getSemaphore('f', { permits: 1, fair: true }).acquire();
    await sleep(100);
    const rejected = [
      expect(waiting).rejects.toBeInstanceOf(LockClientClosedError),
      expect(fairWaiting).rejects.toBeInstanceOf(LockClientClosedError),
    ];
    await waiter.close();
    await Promise.all(rejected);
    await holder.close();
    expect(held.signal.reason).toBeInstanceOf(LockClientClosedError);
    expect(fairHolder.signal.aborted).toBe(true);
  });

  it('rejects bad input before sending anything', async () => {
    const locks = fx.client();
    const make = (name: unknown, options: unknown) => () => locks.getSemaphore(name as string, options as { permits: number });
    for (const bad of [
      make('', { permits: 1 }),
      make('s', undefined),
      make('s', {}),
      make('s', { permits: 0 }),
      make('s', { permits: 1.5 }),
      make('s', { permits: -1 }),
      make('s', { permits: '2' }),
      make('s', { permits: 2, fair: 'yes' }),
      make('s', { permits: 2, other: 1 }),
    ]) {
      expect(bad).toThrow(InvalidArgumentError);
    }
    const sem = locks.getSemaphore('s', { permits: 2 });
    const bad = [{ permits: 3 }, { permits: 0 }, { permits: NaN }, { waitTime: -1 }, { leaseTime: 0 }, { leaseTime: 20 }, { leaseTime: 2 ** 31 }];
    for (const options of [...bad, { signal: 1 }, { nope: 1 }]) {
      await expect(sem.acquire(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(sem.tryAcquire(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(sem.withPermit('x' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    const latch = locks.getCountDownLatch('l');
    expect(() => locks.getCountDownLatch('')).toThrow(InvalidArgumentError);
    for (const n of [0, -1, 1.5, NaN, '3']) await expect(latch.trySetCount(n as number)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(latch.wait({ waitTime: -5 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(latch.wait({ signal: {} } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await fx.keys()).toEqual([]);
  });

  it('Redis failures are LockRedisError', async () => {
    const redis = fx.redis({ maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    const locks = fx.client({}, redis);
    locks.on('error', () => undefined);
    const semaphoreError = await locks.getSemaphore('s', { permits: 1 }).tryAcquire().catch((e: unknown) => e);
    expect(semaphoreError).toBeInstanceOf(LockRedisError);
    // The message names what failed: a semaphore, not a lock.
    expect((semaphoreError as Error).message).toMatch(/^acquire of semaphore "s" failed/);
    const latchError = await locks.getCountDownLatch('l').countDown().catch((e: unknown) => e);
    expect(latchError).toBeInstanceOf(LockRedisError);
    expect((latchError as Error).message).toMatch(/^release of latch "l" failed/);
  });

  it('a waiter that gives up (timeout, abort) leaves no waiter entry behind', async () => {
    const locks = fx.client();
    const sem = locks.getSemaphore('s', { permits: 1 });
    const held = await sem.acquire({ leaseTime: 30_000 });
    const other = fx.client().getSemaphore('s', { permits: 1 });
    expect(await other.tryAcquire({ waitTime: 150 })).toBeNull();
    const controller = new AbortController();
    const aborted = other.acquire({ signal: controller.signal });
    await sleep(50);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    await until(async () => (await fx.keys()).length === 1);
    await held.release();
    expect(await fx.keys()).toEqual([]);
  });

  it('every key of a contended semaphore has an expiry, all along; releasing everything leaves no permit set', async () => {
    // Non-fair and fair objects on one name, single and double requests (need hints, promises of
    // one and of two, the permit set's bookkeeping), while a probe checks every key's expiry.
    const clients = [fx.client(), fx.client(), fx.client()];
    const probe = fx.redis();
    const noExpiry = new Set<string>();
    let running = true;
    const watching = (async () => {
      while (running) {
        for (const key of await fx.keys()) if ((await probe.pttl(key)) === -1) noExpiry.add(key);
        await sleep(2);
      }
    })();
    await Promise.all(
      Array.from({ length: 18 }, async (_, task) => {
        const sem = clients[task % 3]!.getSemaphore('s', { permits: 3, fair: task % 4 === 0 });
        for (let round = 0; round < 6; round += 1) {
          await sem.withPermit(() => sleep(task % 2), { permits: (task % 5 === 0 ? 2 : 1), waitTime: 20_000, leaseTime: 5_000 });
          await sleep(task % 3);
        }
      }),
    );
    running = false;
    await watching;
    for (const key of await fx.keys()) if ((await probe.pttl(key)) === -1) noExpiry.add(key);
    expect([...noExpiry]).toEqual([]);
    expect(await probe.exists(`{${fx.prefix}:s}:semaphore`)).toBe(0);
  });

  it('a waiter set or fair queue that empties and is made again keeps an expiry (the permit set remembers the old one)', async () => {
    const probe = fx.redis();
    for (const fair of [false, true]) {
      const name = fair ? 'f' : 's';
      const [a, b, c] = [fx.client(), fx.client(), fx.client()].map((client) => client.getSemaphore(name, { permits: 2, fair }));
      // Held throughout: the permit set (and what it remembers) stays.
      const kept = await a!.acquire({ leaseTime: 30_000 });
      const first = await a!.acquire({ leaseTime: 30_000 });
      // B waits (its expiry is remembered), then takes the permit: the set or queue it was in empties.
      const second = b!.acquire({ waitTime: 5_000, leaseTime: 10_000 });
      await sleep(50);
      await first.release();
      const held = await second;
      // C waits while that expiry is still remembered: whatever it waits in must expire.
      const third = c!.acquire({ waitTime: 5_000 });
      await sleep(50);
      const base = `{${fx.prefix}:${name}}:semaphore`;
      for (const key of fair ? [`${base}:queue`, `${base}:timeouts`] : [`${base}:waiters`]) {
        expect(await probe.pttl(key), key).toBeGreaterThan(0);
      }
      await held.release();
      await (await third).release();
      await kept.release();
    }
  });

  describe('fair', () => {
    it('strict arrival order across clients; a large head request is not overtaken', async () => {
      const clients = [fx.client(), fx.client(), fx.client()];
      const sem = (i: number) => clients[i % 3]!.getSemaphore('f', { permits: 3, fair: true });
      const held = await sem(0).acquire({ permits: 3, leaseTime: 60_000 });
      const order: string[] = [];
      const waiters: Promise<void>[] = [];
      const needs = [1, 3, 1, 1, 2];
      for (let i = 0; i < needs.length; i += 1) {
        waiters.push(
          (async () => {
            const permit = await sem(i).acquire({ permits: needs[i], waitTime: 20_000, leaseTime: 10_000 });
            order.push(`${i}`);
            await sleep(20);
            await permit.release();
          })(),
        );
        await sleep(40);
      }
      await held.release();
      await sleep(5);
      await Promise.all(waiters);
      expect(order.slice(0, 2)).toEqual(['0', '1']);
      expect(order).toEqual(['0', '1', '2', '3', '4']);
    });

    it('tryAcquire() gets null while anyone waits; a waiter that gives up leaves at once', async () => {
      const a = fx.client().getSemaphore('f', { permits: 2, fair: true });
      const b = fx.client().getSemaphore('f', { permits: 2, fair: true });
      const held = await a.acquire({ permits: 1, leaseTime: 60_000 });
      const big = b.acquire({ permits: 2, waitTime: 20_000 });
      await sleep(100);
      expect(await a.availablePermits()).toBe(1);
      expect(await a.tryAcquire()).toBeNull();
      const gaveUp = await b.tryAcquire({ permits: 1, waitTime: 100 });
      expect(gaveUp).toBeNull();
      await held.release();
      const permit = await big;
      expect(permit.permits).toBe(2);
      await permit.release();
      // The queue is empty again: an immediate tryAcquire succeeds.
      const again = await a.tryAcquire();
      expect(again).not.toBeNull();
      await again!.release();
      expect(await fx.keys()).toEqual([]);
    });
  });
});

export type { Permit };
