import { describe, expect, it } from 'vitest';
import type { LockClient, LockLostInfo, RLock } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

// Re-entry never shortens a hold: a nested acquisition with a shorter lease (or a fixed one
// under a watchdog hold) must not cut the lease the outer acquisition got, and a nested
// watchdog acquisition under a fixed lease keeps the whole hold (and its Lease) alive.

interface Kind {
  readonly kind: string;
  readonly lock: (client: LockClient, name: string) => RLock;
  /** What another client tries, which must fail while the lock is held. */
  readonly rival: (client: LockClient, name: string) => RLock;
}

const KINDS: Kind[] = [
  { kind: 'getLock', lock: (c, n) => c.getLock(n), rival: (c, n) => c.getLock(n) },
  { kind: 'getFencedLock', lock: (c, n) => c.getFencedLock(n), rival: (c, n) => c.getFencedLock(n) },
  { kind: 'getFairLock', lock: (c, n) => c.getFairLock(n), rival: (c, n) => c.getFairLock(n) },
  { kind: 'writeLock', lock: (c, n) => c.getReadWriteLock(n).writeLock(), rival: (c, n) => c.getReadWriteLock(n).writeLock() },
  // Readers share the lock: a writer is the one kept out.
  { kind: 'readLock', lock: (c, n) => c.getReadWriteLock(n).readLock(), rival: (c, n) => c.getReadWriteLock(n).writeLock() },
];

const NAME = 'reentry';

describe.each(KINDS)('$kind: re-entry never shortens a hold', ({ lock: lockOf, rival: rivalOf }) => {
  const f = useLockFixture();
  const lockKey = (): string => `{${f.prefix}:${NAME}}`;

  /** The lock is held, for `minTtlMs` more at least, and another client cannot take it. */
  const expectHeld = async (rival: LockClient, minTtlMs: number): Promise<void> => {
    expect(await f.redis().pttl(lockKey())).toBeGreaterThan(minTtlMs);
    expect(await rivalOf(rival, NAME).tryLock(0)).toBe(false);
  };

  const cleanUp = (client: LockClient): Promise<unknown> => lockOf(client, NAME).forceUnlock().catch(() => undefined);

  it('a nested lock(300) under a 60 s lease keeps the 60 s lease', async () => {
    const locks = f.client();
    const rival = f.client();
    try {
      await locks.runInContext(async () => {
        const lock = lockOf(locks, NAME);
        const lease = await lock.acquire({ leaseTime: 60_000 });
        await lock.lock(300);
        await sleep(450);
        await expectHeld(rival, 50_000);
        expect(lease.signal.aborted).toBe(false);
        expect(await lock.getHoldCount()).toBe(2);
      });
    } finally {
      await cleanUp(rival);
    }
  });

  it('a nested tryLock(0, 300) under lock(60_000) keeps the 60 s lease', async () => {
    const locks = f.client();
    const rival = f.client();
    try {
      await locks.runInContext(async () => {
        const lock = lockOf(locks, NAME);
        await lock.lock(60_000);
        expect(await lock.tryLock(0, 300)).toBe(true);
        await sleep(450);
        await expectHeld(rival, 50_000);
        expect(await lock.getHoldCount()).toBe(2);
      });
    } finally {
      await cleanUp(rival);
    }
  });

  it('a nested lock(300) under a watchdog hold keeps the watchdog lease', async () => {
    // Default watchdogTimeout (30 s): the next renewal is 10 s away, long after 300 ms.
    const locks = f.client();
    const rival = f.client();
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    try {
      await locks.runInContext(async () => {
        const lock = lockOf(locks, NAME);
        const lease = await lock.acquire();
        await lock.lock(300);
        await sleep(450);
        await expectHeld(rival, 25_000);
        expect(lease.signal.aborted).toBe(false);
        expect(await lock.getHoldCount()).toBe(2);
      });
      expect(lost).toEqual([]);
    } finally {
      await cleanUp(rival);
    }
  });

  it('a nested watchdog lock() under a 400 ms lease keeps the outer Lease alive with the hold', async () => {
    const locks = f.client({ watchdogTimeout: 600 });
    const rival = f.client();
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    try {
      await locks.runInContext(async () => {
        const lock = lockOf(locks, NAME);
        const lease = await lock.acquire({ leaseTime: 400 });
        await lock.lock();
        await sleep(1_000);
        // The watchdog keeps the hold alive in Redis, so the outer Lease has not run out either.
        await expectHeld(rival, 0);
        expect(lease.signal.aborted, `aborted with ${String(lease.signal.reason)}`).toBe(false);
        expect(lost).toEqual([]);
        await lock.unlock();
        await lease.release();
      });
    } finally {
      await cleanUp(rival);
    }
  });
});
