import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { LockHandedOffError, MultiLock, RedLock, type Lease, type LockClient, type RLock } from '../../lib/index.js';
import { useLockFixture } from '../helpers/fixtures.js';
import { KINDS, lockOf } from '../helpers/lock-kinds.js';
import { useServers } from '../helpers/servers.js';

// SPEC, "Leases that move and end": after a hand-off the handing-off context's queries answer as
// for a lock it does not hold, whoever adopted the hold. The owner id moved with the hold, so
// Redis alone would still answer "held" for that context: the client must know better.

/** What the current owner's queries answer, both of them. */
const queries = async (lock: RLock): Promise<{ held: boolean; count: number }> => ({
  held: await lock.isHeldByCurrentOwner(),
  count: await lock.getHoldCount(),
});
const NOT_HELD = { held: false, count: 0 };

describe("after lease.handOff(), the handing-off context's queries", () => {
  const fx = useLockFixture();

  for (const kind of KINDS) {
    describe(kind, () => {
      it('answer not held once another client adopted; the adopter has the hold; a fresh context later counts 1', async () => {
        const from = fx.client();
        const to = fx.client();
        const lock = lockOf(from, kind, 'x');
        let handOffOwner = '';
        await from.runInContext(async () => {
          const lease = await lock.acquire();
          expect(await queries(lock)).toEqual({ held: true, count: 1 });
          const handle = await lease.handOff();
          handOffOwner = handle.owner;
          const adopted = await to.adopt(handle);
          expect(await queries(lock)).toEqual(NOT_HELD);
          // Still held, by the adopter: the answer is about the owner, not about the lock.
          expect(await lock.isLocked()).toBe(true);
          // The adopter's side: its Lease is live and the hold, under the moved owner id, counts 1.
          expect(adopted.signal.aborted).toBe(false);
          expect(await lockOf(to, kind, 'x').getHolders()).toEqual([expect.objectContaining({ owner: handle.owner, holdCount: 1 })]);
          await adopted.release();
          expect(await lock.isLocked()).toBe(false);
          expect(await queries(lock)).toEqual(NOT_HELD);
          // This context may not take it again (it would re-enter the moved owner id): refused, still not held.
          await expect(lock.tryLock()).rejects.toBeInstanceOf(LockHandedOffError);
          expect(await queries(lock)).toEqual(NOT_HELD);
        });
        // The same client in a fresh context takes it again and counts from 1.
        await from.runInContext(async () => {
          const again = await lock.acquire();
          expect(again.owner).not.toBe(handOffOwner);
          expect(await queries(lock)).toEqual({ held: true, count: 1 });
          await again.release();
          expect(await queries(lock)).toEqual(NOT_HELD);
        });
      });

      it('answer not held right after the hand-off, before anyone adopted it, and after', async () => {
        const from = fx.client();
        const lock = lockOf(from, kind, 'x');
        await from.runInContext(async () => {
          await lock.acquire();
          // A re-entry: the whole hold count moves, none of it stays with this context.
          await lock.acquire();
          expect(await queries(lock)).toEqual({ held: true, count: 2 });
          const handle = await (await lock.acquire()).handOff();
          expect(handle.holdCount).toBe(3);
          // Kept in Redis for the adopter under this context's owner id, yet no longer this context's.
          expect(await lock.isLocked()).toBe(true);
          expect(await queries(lock)).toEqual(NOT_HELD);
          const adopted = await fx.client().adopt(handle);
          expect(await queries(lock)).toEqual(NOT_HELD);
          await adopted.release();
        });
      });

      it('answer not held when handOff() was called from outside that context', async () => {
        const from = fx.client();
        const lock = lockOf(from, kind, 'x');
        let leaseOut!: (lease: Lease) => void;
        const leased = new Promise<Lease>((resolve) => (leaseOut = resolve));
        let handedOff!: () => void;
        const afterHandOff = new Promise<void>((resolve) => (handedOff = resolve));
        const inside = from.runInContext(async () => {
          leaseOut(await lock.acquire());
          await afterHandOff;
          return queries(lock);
        });
        // The test body runs outside any lock context.
        const handle = await (await leased).handOff();
        handedOff();
        expect(await inside).toEqual(NOT_HELD);
        await (await fx.client().adopt(handle)).release();
      });

      it('outside any context: not held after the hand-off; a later acquisition counts 1', async () => {
        const from = fx.client();
        const lock = lockOf(from, kind, 'x');
        const handle = await (await lock.acquire()).handOff();
        expect(await queries(lock)).toEqual(NOT_HELD);
        const adopted = await fx.client().adopt(handle);
        expect(await queries(lock)).toEqual(NOT_HELD);
        await adopted.release();
        // Outside a context every acquisition is a new owner: nothing bars it.
        const again = await lock.acquire();
        expect(await queries(lock)).toEqual({ held: true, count: 1 });
        await again.release();
        expect(await queries(lock)).toEqual(NOT_HELD);
      });
    });
  }

  it('read: only the context that handed its read hold off stops holding; another reader of the client still holds', async () => {
    const from = fx.client();
    const lock = lockOf(from, 'read', 'x');
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    let counted!: () => void;
    const taken = new Promise<void>((resolve) => (counted = resolve));
    const other = from.runInContext(async () => {
      const lease = await lock.acquire();
      counted();
      await done;
      const answer = await queries(lock);
      await lease.release();
      return answer;
    });
    await taken;
    await from.runInContext(async () => {
      const handle = await (await lock.acquire()).handOff();
      const adopted = await fx.client().adopt(handle);
      expect(await queries(lock)).toEqual(NOT_HELD);
      // The write side of the same lock: not held by this context either.
      expect(await queries(from.getReadWriteLock('x').writeLock())).toEqual(NOT_HELD);
      await adopted.release();
    });
    release();
    expect(await other).toEqual({ held: true, count: 1 });
  });

  it('MultiLock: the whole set and each member answer not held after the hand-off', async () => {
    const from = fx.client();
    const to = fx.client();
    const multi = new MultiLock(from.getLock('a'), from.getFairLock('b'), from.getReadWriteLock('c').writeLock());
    await from.runInContext(async () => {
      const handle = await (await multi.acquire()).handOff();
      expect(await queries(multi)).toEqual(NOT_HELD);
      expect(await queries(from.getLock('a'))).toEqual(NOT_HELD);
      const adopted = await to.adopt(handle);
      expect(await queries(multi)).toEqual(NOT_HELD);
      expect(await multi.isLocked()).toBe(true);
      await adopted.release();
      expect(await multi.isLocked()).toBe(false);
    });
  });

  describe('RedLock over 3 masters', () => {
    const servers = useServers(3);
    let prefix = '';
    beforeEach(() => {
      prefix = `rhq-${randomUUID().slice(0, 8)}`;
    });
    const nodes = (): LockClient[] => {
      const clients = servers.clients({ keyPrefix: prefix });
      for (const client of clients) client.on('error', () => undefined);
      return clients;
    };
    const redLock = (clients: LockClient[]): RedLock => new RedLock(...clients.map((client) => client.getLock('x')), { nodeTimeout: 500 });

    it('answers not held before and after another RedLock adopted; a fresh context later counts 1', async () => {
      const clients = nodes();
      const red = redLock(clients);
      const adopter = redLock(nodes());
      await clients[0]!.runInContext(async () => {
        await red.acquire();
        const lease = await red.acquire();
        expect(await queries(red)).toEqual({ held: true, count: 2 });
        const handle = await lease.handOff();
        expect(await queries(red)).toEqual(NOT_HELD);
        // The home node's own lock, in the same context: its hold moved with the RedLock's.
        expect(await queries(clients[0]!.getLock('x'))).toEqual(NOT_HELD);
        const adopted = await adopter.adopt(handle);
        expect(await queries(red)).toEqual(NOT_HELD);
        expect(await red.isLocked()).toBe(true);
        // The adopter's side: the moved owner holds it, with the moved count, on a majority.
        expect(adopted.signal.aborted).toBe(false);
        expect(await adopter.getHolders()).toEqual([expect.objectContaining({ owner: handle.owner, holdCount: 2 })]);
        await adopted.release();
        expect(await queries(red)).toEqual(NOT_HELD);
        await expect(red.tryLock()).rejects.toBeInstanceOf(LockHandedOffError);
      });
      await clients[0]!.runInContext(async () => {
        const again = await red.acquire();
        expect(await queries(red)).toEqual({ held: true, count: 1 });
        await again.release();
        expect(await queries(red)).toEqual(NOT_HELD);
      });
    });
  });
});
