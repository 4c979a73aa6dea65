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
