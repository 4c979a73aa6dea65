import { describe, expect, it } from 'vitest';
import { MultiLock } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

// A MultiLock releases exactly the member holds it took. A plain unlock() outside a context
// releases "this client's latest unscoped hold" of a lock: a MultiLock that went through it would
// release a hold another task of the same client took meanwhile (a read lock admits both).
describe('MultiLock releases by exact owner', () => {
  const fx = useLockFixture();

  it('a failed round lets go of its own member hold, not a read hold another task took meanwhile', async () => {
    const locks = fx.client();
    const blocker = fx.client().getLock('z');
    await blocker.lock(60_000);
    const readers = `{${fx.prefix}:x}:readers`;
    // Members in order: the read side of x first, then z (held elsewhere: the round fails).
    const multi = new MultiLock(locks.getReadWriteLock('x').readLock(), locks.getLock('z'));
    const round = multi.tryLock(400, 10_000);
    await sleep(100);
    // Another task of the same client reads x while the MultiLock waits for z.
    const lease = await locks.getReadWriteLock('x').readLock().acquire({ leaseTime: 10_000 });
    expect(await round).toBe(false);
    // That task still holds its read lock, and it is the only reader left.
    expect(await fx.redis().zrange(readers, 0, -1)).toEqual([lease.owner]);
    await lease.release();
    expect(await fx.redis().exists(readers)).toBe(0);
    await blocker.unlock();
  });

  it('unlock() outside a context releases the set the MultiLock took, and nothing else', async () => {
    const locks = fx.client();
    const multi = new MultiLock(locks.getReadWriteLock('x').readLock(), locks.getLock('y'));
    expect(await multi.tryLock(0, 10_000)).toBe(true);
    const lease = await locks.getReadWriteLock('x').readLock().acquire({ leaseTime: 10_000 });
    expect(await multi.getHoldCount()).toBe(1);
    await multi.unlock();
    expect(await multi.getHoldCount()).toBe(0);
    // The other task's read hold is untouched and the only one left; y is free.
    expect(await fx.redis().zrange(`{${fx.prefix}:x}:readers`, 0, -1)).toEqual([lease.owner]);
    expect(await locks.getLock('y').isLocked()).toBe(false);
    await lease.release();
    await expect(multi.unlock()).rejects.toMatchObject({ code: 'LOCK_NOT_HELD' });
  });

  it('a plain unlock() elsewhere never releases a MultiLock member; a set left to expire is forgotten', async () => {
    const locks = fx.client();
    const multi = new MultiLock(locks.getLock('p'), locks.getLock('q'));
    expect(await multi.tryLock(0, 500)).toBe(true);
    await expect(locks.getLock('p').unlock()).rejects.toMatchObject({ code: 'LOCK_NOT_HELD' });
    expect(await locks.getLock('p').isLocked()).toBe(true);
    await sleep(700);
    await expect(multi.unlock()).rejects.toMatchObject({ code: 'LOCK_NOT_HELD' });
  });
});
