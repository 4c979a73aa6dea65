import { describe, expect, it } from 'vitest';
import { LockError, LockHandedOffError, MultiLock, RedLock, type Lease, type LeaseHandle, type LockClient, type RLock } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { ALL_KINDS, LOCK_KINDS, lockOf, take, takenByOther, type Held, type MoveKind } from './kinds.js';

// A hand-off and the other calls of its lock context on that lock (acquisitions and re-entries,
// releases, extensions) exclude each other, whichever starts first: a call already under way makes
// the hand-off refuse (LockError, nothing moves); a call that starts while the hand-off is under way,
// or after it, is refused with LockHandedOffError before anything is sent. So this process is
// left no live Lease of the handed-off hold, and the adopter's hold count is the handle's.

const ORDERS = ['call first', 'hand-off first'] as const;
type Order = (typeof ORDERS)[number];
/** Rounds of each order per test: the outcome must not depend on luck. */
const ROUNDS = 3;
const WATCHDOG_MS = 600;

type Settled<T> = PromiseSettledResult<T>;
/** An adopted Lease, and the holds in Redis it stands for. */
interface Adopted {
  readonly lease: Held;
  readonly holds: { kind: MoveKind; name: string; owner: string; count: number }[];
}

/** Starts `call` and the hand-off of `lease` in the same tick, in `order`. */
async function race<T>(order: Order, call: () => Promise<T>, lease: { handOff(): Promise<LeaseHandle> }): Promise<[Settled<T>, Settled<LeaseHandle>]> {
  let called: Promise<T>;
  let handing: Promise<LeaseHandle>;
  if (order === 'call first') {
    called = call();
    handing = lease.handOff();
  } else {
    handing = lease.handOff();
    called = call();
  }
  const [a, b] = await Promise.allSettled([called, handing]);
  return [a, b];
}

/** The hold count `owner` has of `name` in Redis, by `kind` ('permit': 1 while its permit is out). */
async function holdCountIn(client: LockClient, kind: MoveKind, name: string, owner: string): Promise<number> {
  if (kind === 'permit') return (await client.getSemaphore(name, { permits: 1 }).availablePermits()) === 0 ? 1 : 0;
  const holders = await lockOf(client, kind, name).getHolders();
  return holders.find((holder) => holder.owner === owner && holder.mode !== (kind === 'read' ? 'write' : 'read'))?.holdCount ?? 0;
}

function rejectedWith(result: Settled<unknown>, type: new (...args: never[]) => Error, message?: RegExp): void {
  expect(result.status).toBe('rejected');
  const reason: unknown = (result as PromiseRejectedResult).reason;
  expect(reason).toBeInstanceOf(type);
  if (message) expect((reason as Error).message).toMatch(message);
}

function value<T>(result: Settled<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

describe('a hand-off excludes the other calls of its context on that lock, both ways', () => {
  const fx = useLockFixture();

  /**
   * After the rounds: the handing-off client renews none of the adopted holds (watched when
   * `renewedHere` collects its `renewed` events), their counts in Redis stay the handles', and
   * releasing each adopted Lease frees its locks.
   */
  async function adoptersAlone(adopted: Adopted[], renewedHere?: string[]): Promise<void> {
    const probe = fx.client();
    if (renewedHere) {
      renewedHere.length = 0;
      // Two renewal periods of the handing-off client.
      await sleep(WATCHDOG_MS * 0.75);
      const names = new Set(adopted.flatMap(({ holds }) => holds.map(({ name }) => name)));
      expect(renewedHere.filter((name) => names.has(name))).toEqual([]);
    }
    for (const { lease, holds } of adopted) {
      for (const { kind, name, owner, count } of holds) expect(await holdCountIn(probe, kind, name, owner)).toBe(count);
      await lease.release();
      for (const { kind, name } of holds) expect(await takenByOther(probe, kind, name)).toBe(false);
    }
  }

  for (const kind of LOCK_KINDS) {
    it(`${kind}: a re-entry started with the hand-off leaves no live Lease here; the adopter holds the handle's count`, async () => {
      const from = fx.client({ watchdogTimeout: WATCHDOG_MS });
      const to = fx.client({ watchdogTimeout: WATCHDOG_MS });
      const renewedHere: string[] = [];
      from.on('renewed', (info) => renewedHere.push(info.name));
      const adopted: Adopted[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const order of ORDERS) {
          const name = `${order === 'call first' ? 'c' : 'h'}${round}`;
          const lock = lockOf(from, kind, name);
          const { lease, reentry, handOff } = await from.runInContext(async () => {
            const first = await lock.acquire();
            const [again, handed] = await race(order, () => lock.acquire(), first);
            return { lease: first, reentry: again, handOff: handed };
          });
          if (order === 'call first') {
            // The re-entry was under way: the hand-off is refused, and both Leases stay live here.
            rejectedWith(handOff, LockError, /under way/);
            expect((handOff as PromiseRejectedResult).reason).not.toBeInstanceOf(LockHandedOffError);
            const second = value(reentry);
            expect(lease.signal.aborted).toBe(false);
            expect(second.signal.aborted).toBe(false);
            expect(await holdCountIn(fx.client(), kind, name, lease.owner)).toBe(2);
            await second.release();
            await lease.release();
            expect(await takenByOther(fx.client(), kind, name)).toBe(false);
          } else {
            // The hand-off was under way: the re-entry is refused before anything is sent.
            rejectedWith(reentry, LockHandedOffError);
            const handle = value(handOff);
            expect(handle.holdCount).toBe(1);
            expect(lease.signal.reason).toBeInstanceOf(LockHandedOffError);
            const taken = await to.adopt(handle);
            expect(await holdCountIn(fx.client(), kind, name, handle.owner)).toBe(handle.holdCount);
            // Released here: changes nothing there.
            await lease.release();
            adopted.push({ lease: taken, holds: [{ kind, name, owner: handle.owner, count: handle.holdCount }] });
          }
        }
      }
      await adoptersAlone(adopted, renewedHere);
    });
  }

  for (const kind of ALL_KINDS) {
    it(`${kind}: a release or an extension started with the hand-off, either order: exactly one of them happens`, async () => {
      const from = fx.client({ watchdogTimeout: WATCHDOG_MS });
      const to = fx.client({ watchdogTimeout: WATCHDOG_MS });
      const adopted: Adopted[] = [];
      for (const what of ['release', 'extend'] as const) {
        for (const order of ORDERS) {
          const name = `${what}-${order === 'call first' ? 'c' : 'h'}`;
          const { held, called, handOff } = await from.runInContext(async () => {
            const lease = (await take(from, kind, name, { leaseTime: 2_000 }))!;
            const call = what === 'release' ? () => lease.release() : () => lease.extend(10_000);
            const [done, handed] = await race(order, call, lease);
            return { held: lease, called: done, handOff: handed };
          });
          const owner = 'owner' in held ? held.owner : held.id;
          if (order === 'call first') {
            // A last hold's release makes it gone here at once (LockLostError), a re-entry's leaves it under way.
            rejectedWith(handOff, LockError, /under way|released/);
            value(called);
            if (what === 'extend') {
              expect(held.signal.aborted).toBe(false);
              await held.release();
            }
            expect(await takenByOther(fx.client(), kind, name)).toBe(false);
          } else {
            rejectedWith(called, LockHandedOffError);
            const handle = value(handOff);
            expect(held.signal.reason).toBeInstanceOf(LockHandedOffError);
            // An extension sent after the hand-off would have lengthened the handed-off lease.
            expect(handle.leaseTime).toBeLessThanOrEqual(2_000);
            const taken = await to.adopt(handle);
            expect(await holdCountIn(fx.client(), kind, name, owner)).toBe(1);
            const ttl = kind === 'permit' ? 0 : await lockOf(fx.client(), kind, name).remainTimeToLive();
            expect(ttl).toBeLessThanOrEqual(2_000);
            // The refused release, tried again, is a no-op now.
            await held.release();
            adopted.push({ lease: taken, holds: [{ kind, name, owner, count: 1 }] });
          }
        }
      }
      // Fixed leases: nothing to renew.
      await adoptersAlone(adopted);
    });
  }

  it('MultiLock: a re-entry started with the hand-off refuses the whole hand-off, or is refused itself', async () => {
    const from = fx.client({ watchdogTimeout: WATCHDOG_MS });
    const to = fx.client({ watchdogTimeout: WATCHDOG_MS });
    const renewedHere: string[] = [];
    from.on('renewed', (info) => renewedHere.push(info.name));
    const adopted: Adopted[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const order of ORDERS) {
        const names = ['a', 'b', 'c'].map((member) => `${member}-${order === 'call first' ? 'c' : 'h'}${round}`);
        const multi = new MultiLock(from.getLock(names[0]!), from.getFairLock(names[1]!), from.getReadWriteLock(names[2]!).writeLock());
        const kinds: MoveKind[] = ['lock', 'fair', 'write'];
        const { lease, reentry, handOff } = await from.runInContext(async () => {
          const first = await multi.acquire();
          const [again, handed] = await race(order, () => multi.acquire(), first);
          return { lease: first, reentry: again, handOff: handed };
        });
        if (order === 'call first') {
          // Refused as a whole: no member was handed off.
          rejectedWith(handOff, LockError, /under way/);
          const second = value(reentry);
          expect(lease.signal.aborted).toBe(false);
          for (const [i, name] of names.entries()) expect(await holdCountIn(fx.client(), kinds[i]!, name, lease.owner)).toBe(2);
          await second.release();
          await lease.release();
          for (const [i, name] of names.entries()) expect(await takenByOther(fx.client(), kinds[i]!, name)).toBe(false);
        } else {
          rejectedWith(reentry, LockHandedOffError);
          const handle = value(handOff);
          expect(lease.signal.reason).toBeInstanceOf(LockHandedOffError);
          const taken = await to.adopt(handle);
          for (const [i, name] of names.entries()) expect(await holdCountIn(fx.client(), kinds[i]!, name, handle.owner)).toBe(1);
          adopted.push({ lease: taken, holds: names.map((name, i) => ({ kind: kinds[i]!, name, owner: handle.owner, count: 1 })) });
        }
      }
    }
    await adoptersAlone(adopted, renewedHere);
  });

  it('RedLock: a re-entry started with the hand-off leaves no live Lease here', async () => {
    const from = fx.client({ watchdogTimeout: WATCHDOG_MS });
    const to = fx.client({ watchdogTimeout: WATCHDOG_MS });
    const renewedHere: string[] = [];
    from.on('renewed', (info) => renewedHere.push(info.name));
    const adopted: Adopted[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const order of ORDERS) {
        const name = `${order === 'call first' ? 'c' : 'h'}${round}`;
        const red = new RedLock(from.getLock(name));
        const { lease, reentry, handOff } = await from.runInContext(async () => {
          const first = await red.acquire();
          const [again, handed] = await race(order, () => red.acquire(), first);
          return { lease: first, reentry: again, handOff: handed };
        });
        if (order === 'call first') {
          rejectedWith(handOff, LockError, /under way/);
          const second = value(reentry);
          expect(second.signal.aborted).toBe(false);
          expect(await holdCountIn(fx.client(), 'lock', name, lease.owner)).toBe(2);
          await second.release();
          await lease.release();
          expect(await takenByOther(fx.client(), 'lock', name)).toBe(false);
        } else {
          rejectedWith(reentry, LockHandedOffError);
          const handle = value(handOff);
          expect(lease.signal.reason).toBeInstanceOf(LockHandedOffError);
          const taken = await new RedLock(to.getLock(name)).adopt(handle);
          expect(await holdCountIn(fx.client(), 'lock', name, handle.owner)).toBe(handle.holdCount);
          adopted.push({ lease: taken, holds: [{ kind: 'lock', name, owner: handle.owner, count: handle.holdCount }] });
        }
      }
    }
    await adoptersAlone(adopted, renewedHere);
  });

  it('after the hand-off the context cannot take the lock again: also when handOff() was called outside it, and on the other side of a read-write lock', async () => {
    const from = fx.client();
    const to = fx.client();
    const handles: LeaseHandle[] = [];
    const attempts: [RLock, string][] = [
      [from.getLock('outside'), 'outside'],
      [from.getReadWriteLock('rw').readLock(), 'rw: write handed off, read asked'],
      [from.getReadWriteLock('rw2').writeLock(), 'rw2: read handed off, write asked'],
    ];
    await from.runInContext(async () => {
      // Handed off by code running in another context than the one that took it.
      const outside = await from.getLock('outside').acquire();
      handles.push(await from.runInContext(() => outside.handOff()));
      let lease: Lease = await from.getReadWriteLock('rw').writeLock().acquire();
      handles.push(await lease.handOff());
      lease = await from.getReadWriteLock('rw2').readLock().acquire();
      handles.push(await lease.handOff());
      for (const [lock, what] of attempts) {
        await expect(lock.tryLock(), what).rejects.toBeInstanceOf(LockHandedOffError);
      }
      // Another client holds them as its own, even in this context; this one takes them afresh elsewhere.
      const adopted = await Promise.all(handles.map((handle) => to.adopt(handle)));
      expect(await takenByOther(fx.client(), 'lock', 'outside')).toBe(true);
      expect(await takenByOther(fx.client(), 'write', 'rw')).toBe(true);
      for (const lease of adopted) await lease.release();
      expect(await from.runInContext(() => from.getLock('outside').tryLock())).toBe(true);
    });
    expect(await from.getLock('outside').forceUnlock()).toBe(true);
    expect(await fx.keys()).toEqual([]);
  });
});
