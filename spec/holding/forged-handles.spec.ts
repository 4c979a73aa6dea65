import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, MultiLock, type LeaseHandle } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

/** Calls of every command the server ran so far (INFO commandstats), the admin's own INFO left out. */
async function commandCounts(admin: Redis): Promise<string[]> {
  const info = await admin.info('commandstats');
  return [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].filter(([, name]) => name !== 'info').map(([, name, calls]) => `${name}=${calls}`);
}

// A handle may have travelled through a queue or an HTTP body: one whose fields contradict each
// other is refused before anything reaches Redis, and the real handle stays adoptable.
describe('locks.adopt(handle) checks the handle before using it', () => {
  const fx = useLockFixture();

  it('forged or mixed-up handles → InvalidArgumentError, nothing sent, the real ones still adoptable', async () => {
    const admin = fx.redis();
    const holder = fx.client();
    const adopter = fx.client();
    const lock = await (await holder.getLock('a').acquire({ leaseTime: 10_000 })).handOff();
    const permit = await (await holder.getSemaphore('s', { permits: 2 }).acquire({ leaseTime: 10_000 })).handOff();
    const multi = await (await new MultiLock(holder.getLock('m1'), holder.getFencedLock('m2')).acquire({ leaseTime: 10_000 })).handOff();
    const [first, second] = multi.members as [LeaseHandle, LeaseHandle];
    await adopter.getLock('warm').isLocked();
    await sleep(100);
    const before = await commandCounts(admin);

    const forged: [string, unknown][] = [
      ['hold count 0', { ...lock, holdCount: 0 }],
      ['hold count 1.5', { ...lock, holdCount: 1.5 }],
      ['negative hold count', { ...lock, holdCount: -1 }],
      ['lease -2', { ...lock, leaseTime: -2 }],
      ['lease 2.5', { ...lock, leaseTime: 2.5 }],
      ['negative token', { ...lock, token: -1 }],
      ['expiresAt a string', { ...lock, expiresAt: 'soon' }],
      ['a lock with permits', { ...lock, permits: 1 }],
      ['a lock with members', { ...lock, members: [lock] }],
      ['a field no handle has', { ...lock, extra: true }],
      ['a fenced lock without its token', { ...lock, kind: 'fenced' }],
      ['a read hold with a token', { ...lock, kind: 'read', token: 3 }],
      ['a permit made a lock', { ...permit, kind: 'lock' }],
      ['permits above the limit', { ...permit, permits: 3 }],
      ['no permits', { ...permit, permits: 0 }],
      ['permits 1.5', { ...permit, permits: 1.5 }],
      ['a negative limit', { ...permit, limit: -1 }],
      ['a permit with hold count 2', { ...permit, holdCount: 2 }],
      ['fair not a boolean', { ...permit, fair: 'yes' }],
      ['a permit with a token', { ...permit, token: 4 }],
      ['a MultiLock without members', { ...multi, members: [] }],
      ['a MultiLock with a permit member', { ...multi, members: [first, permit] }],
      ['a MultiLock with a forged member', { ...multi, members: [first, { ...second, holdCount: 0 }] }],
      ['a MultiLock member of another keyPrefix', { ...multi, members: [first, { ...second, keyPrefix: 'elsewhere' }] }],
      ['a MultiLock with permits', { ...multi, permits: 1 }],
      ['a RedLock handle without a member', { ...lock, kind: 'redlock', members: [null, null] }],
    ];
    for (const [what, handle] of forged) {
      const error = await adopter.adopt(handle as LeaseHandle).then(
        () => new Error('adopted'),
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(InvalidArgumentError);
    }
    await sleep(100);
    expect(await commandCounts(admin)).toEqual(before);

    // Nothing was claimed: the real handles (through JSON, as they travel) are adopted whole.
    const travelled = (handle: LeaseHandle): LeaseHandle => JSON.parse(JSON.stringify(handle)) as LeaseHandle;
    const adopted = [await adopter.adopt(travelled(lock)), await adopter.adopt(travelled(permit)), await adopter.adopt(travelled(multi))];
    expect(adopted.map((each) => each.signal.aborted)).toEqual([false, false, false]);
    for (const each of adopted) await each.release();
    // Only the fenced lock's token counter stays (it never expires, so tokens only grow).
    expect(await fx.keys()).toEqual([`{${fx.prefix}:m2}:token`]);
  });
});
