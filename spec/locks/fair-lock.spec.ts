import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockClient, LockClientClosedError, LockNotHeldError } from '../../lib/index.js';
import { lockKeys } from '../../lib/keys.js';
import { contend } from '../helpers/contend.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';

describe('fair lock', () => {
  const fx = useLockFixture();
  const keysOf = (name: string) => lockKeys(fx.prefix, name);
  const queued = (admin: Redis, name: string): Promise<number> => admin.zcard(keysOf(name).queue);
  /** The client id of each queued waiter, head first (a waiter id starts with its client's id). */
  const queueClients = async (admin: Redis, name: string): Promise<string[]> =>
    (await admin.zrange(keysOf(name).queue, 0, -1)).map((waiter) => waiter.split('|')[0]!);

  /** A client whose connections the test can cut, as if its process died. */
  const mortalClient = (options: { fairLockWaitTimeout: number }): { locks: LockClient; kill(): void } => {
    const conn = fx.redis();
    const subscriber = fx.redis();
    const locks = fx.client({ ...options, subscriber }, conn);
    locks.on('error', () => undefined);
    return {
      locks,
      kill: () => {
        conn.disconnect();
        subscriber.disconnect();
      },
    };
  };

  it('10 waiters from 3 clients, queued in a known order, get the lock in exactly that order', async () => {
    const admin = fx.redis();
    const clients = [fx.client(), fx.client(), fx.client()];
    const holder = fx.client().getFairLock('order');
    await holder.lock();
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 10; i += 1) {
      // Clients taken out of step with the queue order: neither explains the outcome.
      const lock = clients[(i * 2) % 3]!.getFairLock('order');
      waiters.push(
        (async () => {
          await lock.lock();
          order.push(i);
          await sleep(1);
          await lock.unlock();
        })(),
      );
      await until(async () => (await queued(admin, 'order')) === i + 1);
    }
    await holder.unlock();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await fx.keys()).toEqual([]);
  });

  it('20 workers × 20 rounds: every round they acquire in queue order, never two at once', async () => {
    const admin = fx.redis();
    const probe = fx.redis();
    const probeKey = `${fx.prefix}:probe`;
    const gate = fx.client().getFairLock('rounds');
    const workers = Array.from({ length: 20 }, () => {
      const client = fx.client();
      return { id: client.id, lock: client.getFairLock('rounds') };
    });
    let violations = 0;
    for (let round = 0; round < 20; round += 1) {
      const lease = await gate.acquire();
      const acquired: string[] = [];
      const rounds = workers.map(async ({ id, lock }) => {
        await sleep(Math.random() * 5);
        await lock.lock();
        try {
          if ((await probe.incr(probeKey)) !== 1) violations += 1;
          acquired.push(id);
          await new Promise((resolve) => setImmediate(resolve));
          if ((await probe.decr(probeKey)) !== 0) violations += 1;
        } finally {
          await lock.unlock();
        }
      });
      await until(async () => (await queued(admin, 'rounds')) === 20);
      const queueOrder = await queueClients(admin, 'rounds');
      await lease.release();
      await Promise.all(rounds);
      expect(acquired).toEqual(queueOrder);
    }
    expect(violations).toBe(0);
    expect(await fx.keys()).toEqual([probeKey]);
  }, 60_000);

  it('20 tasks × 10 rounds over 5 clients, free-running, never overlap', async () => {
    const locks = Array.from({ length: 5 }, () => fx.client().getFairLock('free'));
    const result = await contend((task) => locks[task % 5]!, fx.redis(), `${fx.prefix}:probe`, 20, 10);
    expect(result).toEqual({ entries: 200, violations: 0 });
    expect(await fx.keys()).toEqual([`${fx.prefix}:probe`]);
  });

  it('tryLock() never queues: it gets the lock only when it is free and nobody waits', async () => {
    const admin = fx.redis();
    const { queue, queueTimeouts } = keysOf('try');
    const holder = fx.client().getFairLock('try');
    const other = fx.client().getFairLock('try');
    await holder.lock();
    expect(await other.tryLock()).toBe(false);
    expect(await admin.exists(queue, queueTimeouts)).toBe(0);

    // A waiter whose client then dies keeps its place until its time runs out.
    const doomed = mortalClient({ fairLockWaitTimeout: 600 });
    const waiting = doomed.locks
      .getFairLock('try')
      .lock()
      .catch(() => 'died');
    await until(async () => (await queued(admin, 'try')) === 1);
    doomed.kill();
    await holder.unlock();
    expect(await other.isLocked()).toBe(false);
    expect(await other.tryLock()).toBe(false);
    await sleep(700);
    expect(await other.tryLock()).toBe(true);
    expect(await waiting).toBe('died');
    await other.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('a waiter that gives up (budget spent, aborted) leaves at once and delays nobody', async () => {
    const admin = fx.redis();
    const holder = fx.client().getFairLock('quit');
    await holder.lock();
    // Default fairLockWaitTimeout (5 s): a stale entry would hold the next waiter that long.
    const giving = fx.client().getFairLock('quit').tryLock(300);
    await until(async () => (await queued(admin, 'quit')) === 1);
    const controller = new AbortController();
    const aborting = fx.client().getFairLock('quit').tryLock({ waitTime: 30_000, signal: controller.signal });
    await until(async () => (await queued(admin, 'quit')) === 2);
    const next = fx.client({ fairLockWaitTimeout: 30_000 }).getFairLock('quit');
    const nextWaiting = next.tryLock(20_000);
    await until(async () => (await queued(admin, 'quit')) === 3);

    expect(await giving).toBe(false);
    controller.abort(new Error('no longer needed'));
    await expect(aborting).rejects.toThrow('no longer needed');
    // Gone at once: far sooner than a stale entry would time out.
    await until(async () => (await queued(admin, 'quit')) === 1, 1_000);
    const released = performance.now();
    await holder.unlock();
    expect(await nextWaiting).toBe(true);
    // Told by the release, not by a check-in (every 10 s here) or a timeout.
    expect(performance.now() - released).toBeLessThan(2_000);
    await next.unlock();
    // Nobody queued any more: a newcomer's single attempt gets it.
    expect(await fx.client().getFairLock('quit').tryLock()).toBe(true);
  });

  it('a waiter whose client is killed is skipped within fairLockWaitTimeout', async () => {
    const admin = fx.redis();
    const waitTimeout = 800;
    const holder = fx.client().getFairLock('killed');
    await holder.lock();
    const doomed = mortalClient({ fairLockWaitTimeout: waitTimeout });
    void doomed.locks
      .getFairLock('killed')
      .lock()
      .catch(() => undefined);
    await until(async () => (await queued(admin, 'killed')) === 1);
    // The next waiter checks in only every 10 s: it must wake when the dead one's place runs out.
    const next = fx.client({ fairLockWaitTimeout: 30_000 }).getFairLock('killed');
    const nextWaiting = next.tryLock(10_000);
    await until(async () => (await queued(admin, 'killed')) === 2);

    const killedAt = performance.now();
    doomed.kill();
    await holder.unlock();
    expect(await nextWaiting).toBe(true);
    const skippedAfter = performance.now() - killedAt;
    // The dead waiter kept its place until its last check-in was waitTimeout old, no longer.
    expect(skippedAfter).toBeGreaterThan(waitTimeout / 3);
    expect(skippedAfter).toBeLessThan(waitTimeout + 700);
    await next.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('a live waiter keeps its place however long it waits (3 × fairLockWaitTimeout)', async () => {
    const admin = fx.redis();
    const waitTimeout = 600;
    const holder = fx.client().getFairLock('patient');
    await holder.lock();
    const order: string[] = [];
    const waiter = (label: string) => {
      const lock = fx.client({ fairLockWaitTimeout: waitTimeout }).getFairLock('patient');
      return (async () => {
        await lock.lock();
        order.push(label);
        await lock.unlock();
      })();
    };
    const first = waiter('first');
    await until(async () => (await queued(admin, 'patient')) === 1);
    const second = waiter('second');
    await until(async () => (await queued(admin, 'patient')) === 2);
    await sleep(3 * waitTimeout + 100);
    const third = waiter('third');
    await until(async () => (await queued(admin, 'patient')) === 3);
    await holder.unlock();
    await Promise.all([first, second, third]);
    expect(order).toEqual(['first', 'second', 'third']);
    expect(await fx.keys()).toEqual([]);
  });

  it('unlock, forceUnlock and an expired lease each give the head its turn at once', async () => {
    const admin = fx.redis();
    // Check-ins every 10 s: a quick hand-over can only come from the release itself (or the TTL).
    const waiter = fx.client({ fairLockWaitTimeout: 30_000 }).getFairLock('turns');
    const holder = fx.client().getFairLock('turns');
    const handOver = async (free: () => Promise<unknown>): Promise<number> => {
      const waiting = waiter.tryLock(20_000);
      await until(async () => (await queued(admin, 'turns')) === 1);
      const freedAt = performance.now();
      await free();
      expect(await waiting).toBe(true);
      const elapsed = performance.now() - freedAt;
      await waiter.unlock();
      return elapsed;
    };

    await holder.lock(60_000);
    expect(await handOver(() => holder.unlock())).toBeLessThan(2_000);
    await holder.lock(60_000);
    expect(await handOver(() => holder.forceUnlock())).toBeLessThan(2_000);
    await holder.lock(400);
    // The head sleeps no longer than the holder's TTL.
    expect(await handOver(() => Promise.resolve())).toBeLessThan(400 + 2_000);
    expect(await fx.keys()).toEqual([]);
  });

  it('re-enters inside a context, also while others wait; each lock needs its unlock', async () => {
    const admin = fx.redis();
    const locks = fx.client();
    const lock = locks.getFairLock('re');
    const otherLocks = fx.client();
    const other = otherLocks.getFairLock('re');
    await locks.runInContext(async () => {
      await lock.lock();
      const waiting = otherLocks.runInContext(async () => {
        await other.lock();
        const count = await other.getHoldCount();
        await other.unlock();
        return count;
      });
      await until(async () => (await queued(admin, 're')) === 1);
      // Re-entry skips the queue: the owner holds the lock already.
      expect(await lock.tryLock()).toBe(true);
      expect(await lock.withLock(() => lock.getHoldCount())).toBe(3);
      expect(await lock.getHoldCount()).toBe(2);
      await lock.unlock();
      expect(await lock.isHeldByCurrentOwner()).toBe(true);
      expect(await queued(admin, 're')).toBe(1);
      await lock.unlock();
      expect(await waiting).toBe(1);
    });
    expect(await fx.keys()).toEqual([]);
  });

  it('unlock by a non-holder rejects and changes nothing', async () => {
    const locks = fx.client();
    const lock = locks.getFairLock('held');
    await locks.runInContext(() => lock.lock());
    await expect(locks.runInContext(() => lock.unlock())).rejects.toBeInstanceOf(LockNotHeldError);
    await expect(lock.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    await expect(fx.client().getFairLock('held').unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await lock.isLocked()).toBe(true);
    expect(await lock.remainTimeToLive()).toBeGreaterThan(0);
    expect(await lock.forceUnlock()).toBe(true);
    expect(await lock.forceUnlock()).toBe(false);
    expect(await fx.keys()).toEqual([]);
  });

  it('close() rejects waiting calls and takes them out of the queue', async () => {
    const admin = fx.redis();
    const holder = fx.client().getFairLock('closing');
    await holder.lock();
    const locks = fx.client();
    const waiting = locks
      .getFairLock('closing')
      .lock()
      .catch((error: unknown) => error);
    await until(async () => (await queued(admin, 'closing')) === 1);
    await locks.close();
    expect(await waiting).toBeInstanceOf(LockClientClosedError);
    await until(async () => (await queued(admin, 'closing')) === 0, 1_000);
    await holder.unlock();
    expect(await fx.keys()).toEqual([]);
  });

  it('the fair lock excludes the non-fair lock of the same name (one hash)', async () => {
    const fair = fx.client().getFairLock('same');
    await fair.lock();
    expect(await fx.client().getLock('same').tryLock()).toBe(false);
    await fair.unlock();
  });
});
