import { describe, expect, it } from 'vitest';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf } from '../helpers/lock-kinds.js';

// A final release leaves a record that answers its resend. It is one key per lock and client,
// never one per release: replaced when no older call of the client on the lock is in use,
// else appended to and cut back; and it answers every release of the client that a resend can
// replay, also several in flight at once.


describe('release records', () => {
  const rig = useFaultRig();

  /** The record keys of lock `name` on the server, with their TTLs. */
  const recordsOf = async (name: string): Promise<{ key: string; ttlMs: number }[]> => {
    const keys = await rig.admin.keys(`${rig.key(name)}:rec:*`);
    return Promise.all(keys.map(async (key) => ({ key, ttlMs: await rig.admin.pttl(key) })));
  };

  describe('many releases of one lock by one client leave one record, with a TTL', () => {
    for (const kind of KINDS) {
      it(kind, async () => {
        const client = rig.client(rig.lockConnect('direct'));
        const lock = lockOf(client, kind, 'many');
        // Fresh owners (outside a context), then one context owner re-entering, then a Lease.
        for (let i = 0; i < 30; i += 1) {
          expect(await lock.tryLock(0, 10_000)).toBe(true);
          await lock.unlock();
        }
        await client.runInContext(async () => {
          for (let i = 0; i < 5; i += 1) {
            await lock.lock();
            await lock.lock();
            await lock.unlock();
            await lock.unlock();
          }
        });
        for (let i = 0; i < 5; i += 1) await (await lock.acquire()).release();
        const records = await recordsOf('many');
        expect(records).toHaveLength(1);
        expect(records[0]!.ttlMs).toBeGreaterThan(0);
        // In watchdog mode the record answers until the holder's clock would have ended (+1 s).
        expect(records[0]!.ttlMs).toBeLessThanOrEqual(31_000);
        expect(await lock.isLocked()).toBe(false);
      });
    }
  });

  it('two clients on one lock: one record each', async () => {
    const first = rig.client(rig.lockConnect('direct')).getLock('pair');
    const second = rig.client(rig.lockConnect('direct')).getLock('pair');
    for (let i = 0; i < 10; i += 1) {
      for (const lock of [first, second]) {
        expect(await lock.tryLock(0, 5_000)).toBe(true);
        await lock.unlock();
      }
    }
    expect(await recordsOf('pair')).toHaveLength(2);
  });

  it('one release after another: the record is the latest release alone', async () => {
    const lock = rig.client(rig.lockConnect('direct')).getLock('long-run');
    let longest = 0;
    for (let i = 0; i < 300; i += 1) {
      expect(await lock.tryLock(0, 5_000)).toBe(true);
      await lock.unlock();
      const [record] = await recordsOf('long-run');
      longest = Math.max(longest, await rig.admin.strlen(record!.key));
    }
    // Each release came after the last one was answered: its entry ('<call id>=0;') replaced the
    // record. Calls in use at once append, and are cut back (resend-window.spec.ts).
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThanOrEqual(8);
  });

  it('a later release, once the earlier one was answered, gives the record its own time', async () => {
    const lock = rig.client(rig.lockConnect('direct')).getLock('ttl');
    expect(await lock.tryLock(0, 20_000)).toBe(true);
    await lock.unlock();
    expect(await lock.tryLock(0, 500)).toBe(true);
    await lock.unlock();
    const records = await recordsOf('ttl');
    expect(records).toHaveLength(1);
    // The first release was answered, so nothing resends it: the record answers the second
    // (its holder's clock, + 1 s), not the first's 21 s. (With the first still in use the
    // record keeps the longer time: spec/scripts/scripts.spec.ts.)
    expect(records[0]!.ttlMs).toBeGreaterThan(0);
    expect(records[0]!.ttlMs).toBeLessThanOrEqual(1_500);
  });

  describe('a partial and the final release in flight at once, both resent in order', () => {
    for (const kind of KINDS) {
      it(kind, async () => {
        const redis = rig.lockConnect('proxy');
        await ping(redis);
        const client = rig.client(redis);
        const lock = lockOf(client, kind, 'nested');
        await client.runInContext(async () => {
          await lock.lock();
          await lock.lock();
          // Redis runs both releases; both replies are lost and both calls resent: the first
          // (partial) finds the owner's hold gone already and is answered from the record.
          rig.proxy.swallowReplies(2);
          const results = await Promise.allSettled([lock.unlock(), lock.unlock()]);
          expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
          expect(await lock.getHoldCount()).toBe(0);
        });
        expect(await lock.isLocked()).toBe(false);
        const rival = rig.client(rig.lockConnect('direct'));
        expect(await lockOf(rival, kind, 'nested').tryLock(0, 5_000)).toBe(true);
      });
    }
  });
});
