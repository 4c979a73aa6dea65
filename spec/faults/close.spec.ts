import { describe, expect, it } from 'vitest';
import { LockClientClosedError, type LockClient, type RLock } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

// close() stops the watchdog: a watchdog-mode hold is no longer renewed and will expire.
// Its Lease must say so at once (signal aborted with a LockClientClosedError), not stay
// "alive" while the lock quietly runs out.

type Make = (client: LockClient, name: string) => RLock;
const plain: Make = (c, n) => c.getLock(n);
const read: Make = (c, n) => c.getReadWriteLock(n).readLock();
const write: Make = (c, n) => c.getReadWriteLock(n).writeLock();
const fenced: Make = (c, n) => c.getFencedLock(n);
const fair: Make = (c, n) => c.getFairLock(n);

/** `waiter`: what must wait while `lock` is held (a writer, for a read hold). */
const KINDS: { kind: string; lock: Make; waiter: Make }[] = [
  { kind: 'getLock', lock: plain, waiter: plain },
  { kind: 'readLock', lock: read, waiter: write },
  { kind: 'writeLock', lock: write, waiter: write },
  { kind: 'getFencedLock', lock: fenced, waiter: fenced },
  { kind: 'getFairLock', lock: fair, waiter: fair },
];

describe('close()', () => {
  const f = useLockFixture();

  it('aborts every watchdog-mode Lease whose renewal it stops, with LockClientClosedError', async () => {
    const locks = f.client({ watchdogTimeout: 5_000 });
    const leases = await Promise.all(KINDS.map(({ kind, lock }) => lock(locks, `close-${kind}`).acquire()));
    for (const lease of leases) expect(lease.signal.aborted).toBe(false);
    await locks.close();
    for (const [i, lease] of leases.entries()) {
      expect(lease.signal.aborted, `${KINDS[i]!.kind} lease aborted`).toBe(true);
      expect(lease.signal.reason, KINDS[i]!.kind).toBeInstanceOf(LockClientClosedError);
    }
  });

  it.each(KINDS)('$kind: aborts a lease held in a context with re-entries too', async ({ lock }) => {
    const locks = f.client({ watchdogTimeout: 5_000 });
    const lease = await locks.runInContext(async () => {
      const outer = await lock(locks, 'close-nested').acquire();
      await lock(locks, 'close-nested').lock();
      return outer;
    });
    await locks.close();
    expect(lease.signal.reason).toBeInstanceOf(LockClientClosedError);
  });

  // Must keep working: a waiting call gives up with the same error.
  it.each(KINDS)('$kind: a waiting call rejects with LockClientClosedError', async ({ lock, waiter }) => {
    const holder = f.client();
    const locks = f.client();
    const lease = await lock(holder, 'close-wait').acquire({ leaseTime: 20_000 });
    const waiting = waiter(locks, 'close-wait').tryLock(10_000, 5_000);
    waiting.catch(() => undefined);
    await sleep(200);
    await locks.close();
    await expect(waiting).rejects.toBeInstanceOf(LockClientClosedError);
    await lease.release();
  });
});

// Calls started just before close() (an attempt in flight, a wait whose subscription is still
// being set up) must settle too: resolve, or reject with LockClientClosedError, never hang.
describe('close() racing calls in flight', () => {
  const f = useLockFixture();

  const SETTLE_MS = 5_000;
  const settles = (call: Promise<unknown>): Promise<unknown> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve('hung'), SETTLE_MS);
      call.then(
        () => {
          clearTimeout(timer);
          resolve('resolved');
        },
        (error: unknown) => {
          clearTimeout(timer);
          resolve(error);
        },
      );
    });

  const DELAYS: { when: string; before: () => Promise<void> }[] = [
    { when: 'at once', before: () => Promise.resolve() },
    { when: 'after a microtask', before: () => new Promise<void>((resolve) => queueMicrotask(resolve)) },
    { when: 'after a macrotask', before: () => new Promise<void>((resolve) => setImmediate(resolve)) },
    { when: 'after 2 ms', before: () => sleep(2) },
    { when: 'after 10 ms', before: () => sleep(10) },
  ];

  it.each(DELAYS)('every call settles when close() comes $when', async ({ before }) => {
    const holder = f.client();
    const held = await holder.getLock('race-held').acquire({ leaseTime: 20_000 });
    const heldFair = await holder.getFairLock('race-fair-held').acquire({ leaseTime: 20_000 });
    const full = holder.getSemaphore('race-sem-full', { permits: 1 });
    const permit = await full.acquire({ leaseTime: 20_000 });

    const locks = f.client();
    const calls: Record<string, Promise<unknown>> = {
      'a single attempt': locks.getLock('race-free').tryLock(0, 5_000),
      'an acquire': locks.getLock('race-free-2').acquire({ leaseTime: 5_000 }),
      'a waiting tryLock on a held lock': locks.getLock('race-held').tryLock(10_000, 5_000),
      'a waiting lock() on a held lock': locks.getLock('race-held').lock(5_000),
      'a fair lock, free': locks.getFairLock('race-fair').tryLock(10_000, 5_000),
      'a fair lock, held': locks.getFairLock('race-fair-held').tryLock(10_000, 5_000),
      'a semaphore acquire, free': locks.getSemaphore('race-sem', { permits: 2 }).acquire({ waitTime: 10_000, leaseTime: 5_000 }),
      'a semaphore acquire, full': locks.getSemaphore('race-sem-full', { permits: 1 }).acquire({ waitTime: 10_000, leaseTime: 5_000 }),
      'a write lock, free': locks.getReadWriteLock('race-rw').writeLock().tryLock(10_000, 5_000),
    };
    for (const call of Object.values(calls)) call.catch(() => undefined);
    await before();
    const closing = settles(locks.close());
    const outcomes = await Promise.all(Object.values(calls).map(settles));
    expect(await closing, 'close() itself').toBe('resolved');
    const unsettled = Object.keys(calls).filter((_, i) => outcomes[i] !== 'resolved' && !(outcomes[i] instanceof LockClientClosedError));
    expect(unsettled, 'calls that neither resolved nor rejected with LockClientClosedError').toEqual([]);
    await held.release();
    await heldFair.release();
    await permit.release();
  }, 30_000);
});
