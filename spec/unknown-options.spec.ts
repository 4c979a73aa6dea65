import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockClient,
  MultiLock,
  RedLock,
  type Lease,
  type Permit,
  type RLock,
} from '../lib/index.js';
import { instrumentLocks } from '../lib/otel/index.js';
import { sleep } from './helpers/fixtures.js';
import { useServers } from './helpers/servers.js';

/** Calls of every command each server ran so far (INFO commandstats), the admin's own INFO left out. */
async function commandCounts(admins: readonly Redis[]): Promise<string[]> {
  const counts = await Promise.all(admins.map((admin) => admin.info('commandstats')));
  return counts.flatMap((info, i) =>
    [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].filter(([, name]) => name !== 'info').map(([, name, calls]) => `${i}:${name}=${calls}`),
  );
}

/** The one wording every public call uses for a key it does not know. */
const UNKNOWN = /^unknown option `bogus`(?: in `\w+`)? \(accepted: \w+(?:, \w+)*\)$/;

async function rejectsUnknown(call: () => Promise<unknown>): Promise<void> {
  const error = await call().then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toMatch(UNKNOWN);
}

function throwsUnknown(call: () => unknown): void {
  expect(call).toThrow(InvalidArgumentError);
  expect(call).toThrow(UNKNOWN);
}

// Three independent servers (RedLock needs them); every client runs on the family under test.
describe('an option key a call does not know → InvalidArgumentError, nothing sent', () => {
  const servers = useServers(3);

  it('every public call that takes options', async () => {
    const admins = servers.list.map((server) => servers.connect(server));
    const clients = servers.clients({ keyPrefix: 'unknown-options' });
    const [locks] = clients as [LockClient];
    const bogus = { bogus: 1 } as never;
    const redLock = new RedLock(...clients.map((client) => client.getLock('red')));
    const rw = locks.getReadWriteLock('rw');
    const multi = new MultiLock(locks.getLock('m1'), locks.getFencedLock('m2'));
    const sem = locks.getSemaphore('sem', { permits: 2 });

    // Held before the count starts: handOff() needs a Lease (fixed leases: no renewals meanwhile).
    const held: { name: string; lease: Lease | Permit }[] = [
      { name: 'lock', lease: await locks.getLock('held').acquire({ leaseTime: 10_000 }) },
      { name: 'permit', lease: await sem.acquire({ leaseTime: 10_000 }) },
      { name: 'MultiLock', lease: await multi.acquire({ leaseTime: 10_000 }) },
      { name: 'RedLock', lease: await redLock.acquire({ leaseTime: 10_000 }) },
    ];
    const handle = await locks.getLock('moved').acquire({ leaseTime: 10_000 }).then((lease) => lease.handOff());
    const movedRed = new RedLock(...clients.map((client) => client.getLock('red-moved')));
    const redHandle = await movedRed.acquire({ leaseTime: 10_000 }).then((lease) => lease.handOff());
    await locks.getCountDownLatch('latch').trySetCount(1);
    await Promise.all(clients.map(async (client) => client.getLock('warm').tryLock()));
    await sleep(200);
    const before = await commandCounts(admins);

    const kinds: [string, RLock][] = [
      ['lock', locks.getLock('a')],
      ['fair lock', locks.getFairLock('a')],
      ['fenced lock', locks.getFencedLock('a')],
      ['read lock', rw.readLock()],
      ['write lock', rw.writeLock()],
      ['MultiLock', multi],
      ['RedLock', redLock],
    ];
    let ran = 0;
    for (const [kind, lock] of kinds) {
      await expect(lock.tryLock({ waitTime: 0, lease: 1_000 } as never), kind).rejects.toThrow(/unknown option `lease`/);
      await rejectsUnknown(() => lock.tryLock(bogus));
      await rejectsUnknown(() => lock.tryLock(0, 1_000, bogus));
      await rejectsUnknown(() => lock.lock(undefined, bogus));
      await rejectsUnknown(() => lock.lock(1_000, bogus));
      await rejectsUnknown(() => lock.acquire(bogus));
      await expect(lock.withLock(() => (ran += 1), { wait: 0 } as never)).rejects.toThrow(/unknown option `wait`/);
      await rejectsUnknown(() => lock.withLock(() => (ran += 1), bogus));
      // The options form takes no more arguments: a leaseTime after it would be dropped.
      await expect(lock.tryLock({ waitTime: 0 } as never, 1_000)).rejects.toThrow(InvalidArgumentError);
    }
    const fenced = locks.getFencedLock('f');
    await rejectsUnknown(() => fenced.lockAndGetToken(undefined, bogus));
    await rejectsUnknown(() => fenced.tryLockAndGetToken(bogus));
    await rejectsUnknown(() => fenced.tryLockAndGetToken(0, 1_000, bogus));

    throwsUnknown(() => locks.getSemaphore('sem', { permits: 2, bogus: 1 } as never));
    await rejectsUnknown(() => sem.acquire(bogus));
    await rejectsUnknown(() => sem.tryAcquire(bogus));
    await rejectsUnknown(() => sem.withPermit(() => (ran += 1), bogus));
    await rejectsUnknown(() => locks.getCountDownLatch('latch').wait(bogus));

    const election = locks.getElection('e');
    await rejectsUnknown(() => election.campaign(bogus));
    throwsUnknown(() => election.observe(bogus));
    await rejectsUnknown(() => locks.runExclusive('job', () => (ran += 1), { atMostFor: 1_000, bogus: 1 } as never));

    for (const { lease } of held) await rejectsUnknown(() => lease.handOff(bogus));
    await rejectsUnknown(() => locks.adopt(handle, bogus));
    await rejectsUnknown(() => movedRed.adopt(redHandle, bogus));

    throwsUnknown(() => new LockClient(admins[0]!, bogus));
    throwsUnknown(() => new LockClient(admins[0]!, { syncReplicas: { replicas: 1, timeout: 100, bogus: 1 } } as never));
    throwsUnknown(() => new RedLock(...clients.map((client) => client.getLock('red')), bogus));
    throwsUnknown(() => instrumentLocks(bogus));

    expect(ran).toBe(0);
    await sleep(100);
    expect(await commandCounts(admins)).toEqual(before);

    // The same calls with their keys spelt right go through.
    expect(await kinds[0]![1].tryLock({ waitTime: 0, leaseTime: 1_000 })).toBe(true);
    await (await locks.adopt(handle, { maxHoldTime: 1_000 })).release();
    await (await movedRed.adopt(redHandle, {})).release();
    for (const { lease } of held) await lease.release();
  });
});
