import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockError,
  LockHandedOffError,
  LockLostError,
  MultiLock,
  RedLock,
  type Lease,
  type LeaseHandle,
  type Permit,
} from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { ALL_KINDS, take, takenByOther } from './kinds.js';

describe('lease.handOff() and locks.adopt(handle)', () => {
  const fx = useLockFixture();

  for (const kind of ALL_KINDS) {
    describe(kind, () => {
      it('the adopter holds the same hold, renews it past 3 × watchdogTimeout and releases it', async () => {
        const from = fx.client({ watchdogTimeout: 300 });
        const to = fx.client({ watchdogTimeout: 300 });
        const held = (await take(from, kind, 'x'))!;
        const handle = JSON.parse(JSON.stringify(await held.handOff())) as LeaseHandle;
        expect(held.signal.aborted).toBe(true);
        expect(held.signal.reason).toBeInstanceOf(LockHandedOffError);
        expect(held.signal.reason).toBeInstanceOf(LockError);
        expect(handle.kind).toBe(kind === 'fair' ? 'fair-lock' : kind);
        await held.release(); // resolves, changes nothing
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(true);

        const adopted = (await to.adopt(handle)) as Lease | Permit;
        if ('owner' in adopted) expect(adopted.owner).toBe(handle.owner);
        else expect(adopted.id).toBe(handle.owner);
        if (kind === 'fenced') expect((adopted as Lease).token).toBe((held as Lease).token);
        // The handing-off client renews nothing any more: the adopter keeps it alive alone.
        await from.close();
        await sleep(1_000);
        expect(adopted.signal.aborted).toBe(false);
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(true);
        await adopted.release();
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(false);
        await expect(to.adopt(handle)).rejects.toBeInstanceOf(LockLostError);
      });

      it('of two adopters exactly one gets it; adopting again rejects', async () => {
        const from = fx.client();
        const held = (await take(from, kind, 'x'))!;
        const handle = await held.handOff();
        const adopters = [fx.client(), fx.client(), fx.client()];
        const results = await Promise.allSettled(adopters.map((client) => client.adopt(handle)));
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(LockLostError);
        await expect(adopters[0]!.adopt(handle)).rejects.toBeInstanceOf(LockLostError);
        await (won[0] as PromiseFulfilledResult<Lease | Permit>).value.release();
      });

      it('a handle adopted after the gap it covers finds the hold gone', async () => {
        const from = fx.client({ watchdogTimeout: 200 });
        const held = (await take(from, kind, 'x'))!;
        const handle = await held.handOff({ adoptWithin: 300 });
        expect(handle.expiresAt - Date.now()).toBeLessThanOrEqual(300);
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(true);
        await sleep(450);
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(false);
        await expect(fx.client().adopt(handle)).rejects.toBeInstanceOf(LockLostError);
      });

      it('unadopted, the hold is kept adoptWithin from the hand-off, also when that is shorter than its lease', async () => {
        const from = fx.client({ watchdogTimeout: 3_000 });
        const held = (await take(from, kind, 'x'))!;
        const handedAt = Date.now();
        const handle = await held.handOff({ adoptWithin: 400 });
        expect(handle.expiresAt - handedAt).toBeLessThanOrEqual(400);
        // A rival that starts waiting now gets in once the gap ended, not when the 3 s lease would have.
        const startedAt = performance.now();
        const rival = await take(fx.client(), kind === 'read' ? 'write' : kind, 'x', { waitTime: 4_000 });
        expect(rival).not.toBeNull();
        expect(performance.now() - startedAt).toBeLessThan(1_500);
        await rival!.release();
        await expect(fx.client().adopt(handle)).rejects.toBeInstanceOf(LockLostError);
      });

      it('a fixed lease keeps its end through the hand-off', async () => {
        const from = fx.client();
        const held = (await take(from, kind, 'x', { leaseTime: 600 }))!;
        const handle = await held.handOff();
        expect(handle.leaseTime).toBeGreaterThan(0);
        const adopted = (await fx.client().adopt(handle)) as Lease | Permit;
        adopted.signal.addEventListener('abort', () => undefined);
        await adopted.extend(1_500);
        await sleep(900);
        expect(adopted.signal.aborted).toBe(false);
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(true);
        await adopted.release();
      });
    });
  }

  it('a re-entrant hold moves with its hold count, and the context that handed it off cannot re-enter it', async () => {
    const from = fx.client();
    const lock = from.getLock('r');
    const handle = await from.runInContext(async () => {
      await lock.acquire();
      const inner = await lock.acquire();
      const handed = await inner.handOff();
      await expect(lock.tryLock()).rejects.toBeInstanceOf(LockHandedOffError);
      await expect(lock.unlock()).rejects.toThrow(/not held/);
      return handed;
    });
    expect(handle.holdCount).toBe(2);
    const to = fx.client();
    const adopted = await to.adopt(handle);
    expect((await to.getLock('r').getHolders())[0]).toMatchObject({ owner: handle.owner, holdCount: 2 });
    // The adopted Lease stands for the whole hold: one release() frees the lock.
    await adopted.release();
    expect(await to.getLock('r').isLocked()).toBe(false);
  });

  it('a short adoptWithin cuts only the handed-off hold: other readers and other permits keep theirs', async () => {
    const from = fx.client({ watchdogTimeout: 3_000 });
    const other = fx.client({ watchdogTimeout: 3_000 });
    const reader = await other.getReadWriteLock('rw').readLock().acquire();
    const permit = await other.getSemaphore('sem', { permits: 2 }).acquire();
    const handed = await from.getReadWriteLock('rw').readLock().acquire();
    const handedPermit = await from.getSemaphore('sem', { permits: 2 }).acquire();
    await handed.handOff({ adoptWithin: 300 });
    await handedPermit.handOff({ adoptWithin: 300 });
    await sleep(600);
    const readers = await other.getReadWriteLock('rw').readLock().getHolders();
    expect(readers.map((holder) => holder.owner)).toEqual([reader.owner]);
    expect(readers[0]!.ttl).toBeGreaterThan(1_500);
    expect(reader.signal.aborted).toBe(false);
    expect(await takenByOther(fx.client(), 'write', 'rw')).toBe(true);
    expect(await other.getSemaphore('sem', { permits: 2 }).availablePermits()).toBe(1);
    expect(permit.signal.aborted).toBe(false);
    await reader.release();
    await permit.release();
    expect(await fx.keys()).toEqual([]);
  });

  it('a read (or write) hold of an owner that holds both sides is not handed off', async () => {
    const client = fx.client();
    const rw = client.getReadWriteLock('rw');
    await client.runInContext(async () => {
      const write = await rw.writeLock().acquire();
      const read = await rw.readLock().acquire();
      await expect(read.handOff()).rejects.toThrow(/both sides/);
      await expect(write.handOff()).rejects.toThrow(/both sides/);
      expect(read.signal.aborted).toBe(false);
      await read.release();
      await write.release();
    });
    expect(await rw.writeLock().isLocked()).toBe(false);
  });

  it('checks the handle before anything is sent', async () => {
    const client = fx.client();
    const lease = await client.getLock('x').acquire();
    const handle = await lease.handOff();
    for (const bad of [null, 1, 'x', {}, { ...handle, rlock: 2 }, { ...handle, kind: 'nope' }, { ...handle, holdCount: 0 }, { ...handle, id: '' }]) {
      await expect(client.adopt(bad as LeaseHandle)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(fx.client({ keyPrefix: `${fx.prefix}-other` }).adopt(handle)).rejects.toBeInstanceOf(InvalidArgumentError);
    await (await client.adopt(handle)).release();
  });

  it('handing off a hold that is gone rejects with LockLostError', async () => {
    const client = fx.client();
    client.on('lost', () => undefined);
    const lease = await client.getLock('x').acquire();
    await lease.release();
    await expect(lease.handOff()).rejects.toBeInstanceOf(LockLostError);
    const other = await client.getLock('y').acquire();
    await client.getLock('y').forceUnlock();
    await expect(other.handOff()).rejects.toBeInstanceOf(LockLostError);
    expect(await fx.keys()).toEqual([]);
  });
});

describe('MultiLock leases', () => {
  const fx = useLockFixture();

  it('extend reaches every member; handOff carries one handle per member; adopt takes them all', async () => {
    const from = fx.client({ watchdogTimeout: 300 });
    const multi = new MultiLock(from.getLock('a'), from.getFairLock('b'), from.getReadWriteLock('c').writeLock());
    const fixed = await multi.acquire({ leaseTime: 300 });
    await fixed.extend(1_500);
    await sleep(500);
    expect(fixed.signal.aborted).toBe(false);
    expect(await takenByOther(fx.client(), 'fair', 'b')).toBe(true);
    await fixed.release();

    const lease = await multi.acquire();
    const handle = JSON.parse(JSON.stringify(await lease.handOff())) as LeaseHandle;
    expect(handle.kind).toBe('multi');
    expect(handle.members).toHaveLength(3);
    expect(lease.signal.reason).toBeInstanceOf(LockHandedOffError);
    const to = fx.client({ watchdogTimeout: 300 });
    const adopted = await to.adopt(handle);
    await from.close();
    await sleep(1_000);
    expect(adopted.signal.aborted).toBe(false);
    expect(await takenByOther(fx.client(), 'write', 'c')).toBe(true);
    await adopted.release();
    for (const [kind, name] of [['lock', 'a'], ['fair', 'b'], ['write', 'c']] as const) {
      expect(await takenByOther(fx.client(), kind, name)).toBe(false);
    }
    await expect(fx.client().adopt(handle)).rejects.toBeInstanceOf(LockLostError);
  });

  it('maxHoldTime caps every member: the MultiLock Lease aborts with it', async () => {
    const client = fx.client({ watchdogTimeout: 300 });
    client.on('lost', () => undefined);
    const multi = new MultiLock(client.getLock('a'), client.getLock('b'));
    const lease = await multi.acquire({ maxHoldTime: 500 });
    await sleep(900);
    expect((lease.signal.reason as LockLostError).reason).toBe('max-hold-time');
    expect(await client.getLock('a').isLocked()).toBe(false);
    await lease.release();
  });
});

describe('RedLock leases', () => {
  const fx = useLockFixture();

  it('a one-node RedLock: extend, handOff and a per-call maxHoldTime work; its handle is adopted with redLock.adopt, not locks.adopt', async () => {
    const client = fx.client();
    const red = new RedLock(client.getLock('a'));
    const lease = await red.acquire({ leaseTime: 5_000 });
    await lease.extend(20_000);
    expect(await client.getLock('a').remainTimeToLive()).toBeGreaterThan(15_000);
    const handle = await lease.handOff();
    expect(handle.kind).toBe('redlock');
    await expect(fx.client().adopt(handle)).rejects.toBeInstanceOf(InvalidArgumentError);
    const adopted = await new RedLock(fx.client().getLock('a')).adopt(handle);
    await adopted.release();
    expect(await fx.keys()).toEqual([]);
    const capped = await red.acquire({ maxHoldTime: 300 });
    await sleep(600);
    expect((capped.signal.reason as LockLostError).reason).toBe('max-hold-time');
    expect(await fx.keys()).toEqual([]);
  });
});
