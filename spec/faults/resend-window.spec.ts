import { describe, expect, it } from 'vitest';
import { LockClient, type Lease, type LockLostInfo, type RLock } from '../../lib/index.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf, type Kind } from '../helpers/lock-kinds.js';

// Many calls of one client on one lock in flight at once, across a reset that makes the client
// resend them: each is applied once, however many there are. The proxy lets Redis run the calls,
// swallows SWALLOWED replies and resets the socket; every call still unanswered is resent.
// (A client keeps at most 64 calls on one lock unanswered, so the proxy waits for fewer.)
const SWALLOWED = 50;

/** What a log or record may hold: 2 × 64 - 1 entries of at most 12 characters, or 256 before it is pruned. */
const LOG_BOUND = 256 + 127 * 12;


/** A lock another owner cannot take while `kind` is held: the write side for a read hold. */
function rivalOf(client: LockClient, kind: Kind, name: string): RLock {
  return lockOf(client, kind === 'read' ? 'write' : kind, name);
}

/** The hash field of an owner's call log. */
function logField(kind: Kind, owner: string): string {
  if (kind === 'read') return `log:r:${owner}`;
  if (kind === 'write') return `log:w:${owner}`;
  return `log:${owner}`;
}

describe('resend window: calls in flight at once are each applied once', () => {
  const rig = useFaultRig();

  /** A client whose command connection crosses the proxy; `lost` events are collected. */
  const proxied = async (): Promise<{ client: LockClient; lost: LockLostInfo[] }> => {
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    const client = rig.client(redis);
    const lost: LockLostInfo[] = [];
    client.on('lost', (info) => lost.push(info));
    return { client, lost };
  };
  const direct = (): LockClient => rig.client(rig.lockConnect('direct'));

  describe('one owner: 1000 holds, 900 released at once across a reset, 100 still held', () => {
    for (const kind of KINDS) {
      it(kind, async () => {
        const { client, lost } = await proxied();
        const lock = lockOf(client, kind, 'two');
        const rival = rivalOf(direct(), kind, 'two');
        await client.runInContext(async () => {
          const leases: Lease[] = await Promise.all(Array.from({ length: 1000 }, () => lock.acquire({ leaseTime: 20_000 })));
          expect(await lock.getHoldCount()).toBe(1000);
          rig.proxy.swallowReplies(SWALLOWED);
          const released = await Promise.allSettled(leases.slice(0, 900).map((lease) => lease.release()));
          expect(released.filter((result) => result.status === 'rejected')).toEqual([]);

          const kept = leases.slice(900);
          expect(await lock.getHoldCount()).toBe(100);
          expect(kept.filter((lease) => lease.signal.aborted)).toEqual([]);
          expect(lost).toEqual([]);
          expect(await rival.tryLock(0, 5_000)).toBe(false);
          expect(await rig.admin.hstrlen(rig.key('two'), logField(kind, leases[0]!.owner))).toBeLessThanOrEqual(LOG_BOUND);

          await Promise.all(kept.map((lease) => lease.release()));
        });
        expect(lost).toEqual([]);
        expect(await rival.tryLock(0, 5_000)).toBe(true);
      });
    }
  });

  describe('one hold, then 1000 re-entries at once across a reset: counted once each, free after the last release', () => {
    for (const kind of KINDS) {
      it(kind, async () => {
        const { client, lost } = await proxied();
        const lock = lockOf(client, kind, 'reenter');
        const rival = rivalOf(direct(), kind, 'reenter');
        await client.runInContext(async () => {
          const first = await lock.acquire({ leaseTime: 20_000 });
          rig.proxy.swallowReplies(SWALLOWED);
          await Promise.all(Array.from({ length: 1000 }, () => lock.lock(20_000)));
          expect(await lock.getHoldCount()).toBe(1001);
          expect(await rig.admin.hstrlen(rig.key('reenter'), logField(kind, first.owner))).toBeLessThanOrEqual(LOG_BOUND);
          await Promise.all(Array.from({ length: 1000 }, () => lock.unlock()));
          expect(await rival.tryLock(0, 5_000)).toBe(false);
          await first.release();
        });
        expect(lost).toEqual([]);
        expect(await rival.tryLock(0, 5_000)).toBe(true);
      });
    }
  });

  describe('a final release and new holds of the same owner in flight at once, all resent', () => {
    for (const kind of KINDS) {
      it(kind, async () => {
        const { client, lost } = await proxied();
        const lock = lockOf(client, kind, 'again');
        const rival = rivalOf(direct(), kind, 'again');
        await client.runInContext(async () => {
          await lock.lock(20_000);
          // The final release's reply is lost; the owner's new holds wait for its answer (a resend
          // after a fresh hold would find no entry in the new log), so they come after the resend.
          rig.proxy.swallowReplies(1);
          await Promise.all([lock.unlock(), lock.lock(20_000), lock.lock(20_000)]);
          expect(await lock.getHoldCount()).toBe(2);
          await lock.unlock();
          expect(await rival.tryLock(0, 5_000)).toBe(false);
          await lock.unlock();
        });
        expect(lost).toEqual([]);
        expect(await rival.tryLock(0, 5_000)).toBe(true);
      });
    }
  });

  describe('400 owners of one client release at once across a reset: every release resolves', () => {
    for (const kind of ['read', 'semaphore'] as const) {
      it(kind, async () => {
        const { client } = await proxied();
        let release: (() => Promise<void>)[];
        if (kind === 'read') {
          // Each reader in a context of its own: 400 owners of one client.
          const lock = client.getReadWriteLock('many').readLock();
          const leases = await Promise.all(Array.from({ length: 400 }, () => client.runInContext(() => lock.acquire({ leaseTime: 20_000 }))));
          release = leases.map((lease) => () => lease.release());
        } else {
          const semaphore = client.getSemaphore('many', { permits: 1000 });
          rig.proxy.swallowReplies(SWALLOWED);
          const permits = await Promise.all(Array.from({ length: 400 }, () => semaphore.acquire({ leaseTime: 20_000 })));
          expect(await semaphore.availablePermits()).toBe(600);
          release = permits.map((permit) => () => permit.release());
        }
        rig.proxy.swallowReplies(SWALLOWED);
        const results = await Promise.allSettled(release.map((f) => f()));
        expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
        if (kind === 'read') {
          expect(await direct().getReadWriteLock('many').writeLock().tryLock(0, 5_000)).toBe(true);
          const record = `${rig.key('many')}:rec:r:r:${client.id}`;
          expect(await rig.admin.strlen(record)).toBeLessThanOrEqual(LOG_BOUND);
        } else {
          expect(await direct().getSemaphore('many', { permits: 1000 }).availablePermits()).toBe(1000);
        }
      });
    }
  });

  it('latch: 900 count-downs at once across a reset count 900; the answers go to one record of the client', async () => {
    const { client } = await proxied();
    const latch = client.getCountDownLatch('latch');
    expect(await latch.trySetCount(1000)).toBe(true);
    rig.proxy.swallowReplies(SWALLOWED);
    const left = await Promise.all(Array.from({ length: 900 }, () => latch.countDown()));
    expect(Math.min(...left)).toBe(100);
    expect(await latch.getCount()).toBe(100);
    expect(await rig.admin.keys(`${rig.key('latch')}:rec:*`)).toEqual([`${rig.key('latch')}:rec:l:${client.id}`]);
    expect(await rig.admin.strlen(`${rig.key('latch')}:rec:l:${client.id}`)).toBeLessThanOrEqual(LOG_BOUND);
  });

  it('forceUnlock: 200 calls at once across a reset, one deletes; their answers go to one record of the client', async () => {
    const holder = direct().getLock('force');
    await holder.lock(30_000);
    const { client } = await proxied();
    const lock = client.getLock('force');
    rig.proxy.swallowReplies(SWALLOWED);
    const forced = await Promise.all(Array.from({ length: 200 }, () => lock.forceUnlock()));
    expect(forced.filter(Boolean)).toHaveLength(1);
    expect(await rig.admin.keys(`${rig.key('force')}:rec:*`)).toEqual([`${rig.key('force')}:rec:f:${client.id}`]);
    expect(await rig.admin.strlen(`${rig.key('force')}:rec:f:${client.id}`)).toBeLessThanOrEqual(LOG_BOUND);
  });

  it('election: 40 campaigns of one client at once across resets, each leads once, proclaims and resigns', async () => {
    const { client, lost } = await proxied();
    const election = client.getElection('vote');
    const key = `${rig.key('vote')}:election`;
    let round = 0;
    // The first attempts of all 40 go out at once: the first 20 are resent.
    rig.proxy.swallowReplies(20);
    const epochs = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const leadership = await election.campaign({ value: `c${i}` });
        round += 1;
        // A reset in every fourth leadership: its first proclaim is resent.
        if (round % 4 === 0) rig.proxy.swallowReplies(1);
        for (let j = 1; j <= 5; j += 1) await leadership.proclaim(`c${i}.${j}`);
        expect(await rig.admin.hget(key, 'rev')).toBe('5');
        await leadership.resign();
        return leadership.epoch;
      }),
    );
    expect(new Set(epochs).size).toBe(40);
    expect(await rig.admin.get(`${key}:epoch`)).toBe('40');
    expect(await election.leader()).toBeNull();
    expect(lost).toEqual([]);
    expect(await rig.admin.strlen(`${key}:rec:r:${client.id}`)).toBeLessThanOrEqual(LOG_BOUND);
  });

  it('a log and a record stay bounded round after round of many calls at once', async () => {
    const client = rig.client(rig.lockConnect('direct'));
    const rw = client.getReadWriteLock('rounds');
    const record = `${rig.key('rounds')}:rec:r:r:${client.id}`;
    for (let round = 0; round < 5; round += 1) {
      // 300 readers of one client take and release at once: their final releases share one record.
      await Promise.all(
        Array.from({ length: 300 }, () =>
          client.runInContext(async () => {
            await rw.readLock().lock(10_000);
            await rw.readLock().unlock();
          }),
        ),
      );
      expect(await rig.admin.strlen(record)).toBeLessThanOrEqual(LOG_BOUND);
      // One writer re-enters 300 times at once, then releases as often: one owner's log.
      await client.runInContext(async () => {
        const write = rw.writeLock();
        await write.lock(10_000);
        await Promise.all(Array.from({ length: 300 }, () => write.lock(10_000)));
        const field = `log:w:${(await write.acquire({ leaseTime: 10_000 })).owner}`;
        expect(await rig.admin.hstrlen(rig.key('rounds'), field)).toBeLessThanOrEqual(LOG_BOUND);
        await Promise.all(Array.from({ length: 302 }, () => write.unlock()));
      });
      expect(await rw.writeLock().isLocked()).toBe(false);
      expect(await rw.readLock().isLocked()).toBe(false);
    }
  });
});
