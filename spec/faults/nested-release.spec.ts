import { describe, expect, it } from 'vitest';
import { LockLostError, LockNotHeldError, type LockLostInfo } from '../../lib/index.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// A nested release that finds the lock gone (deleted, or its lease over) tells the holds the
// owner still believes in, not only its own caller.
describe('a nested release that finds the lock gone', () => {
  const rig = useFaultRig();

  it('aborts the outer Lease and emits lost', async () => {
    const locks = rig.client(rig.lockConnect('direct'));
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    const lock = locks.getLock('nested');
    await locks.runInContext(async () => {
      const outer = await lock.acquire();
      const inner = await lock.acquire({ leaseTime: 10_000 });
      // Deleted behind the holder's back (an operator, an eviction), before the next renewal.
      await rig.admin.del(rig.key('nested'));
      await expect(inner.release()).rejects.toBeInstanceOf(LockNotHeldError);
      expect(outer.signal.aborted).toBe(true);
      expect(outer.signal.reason).toBeInstanceOf(LockLostError);
      expect(lost).toMatchObject([{ name: 'nested', reason: 'deleted' }]);
      // Its own release then changes nothing.
      await expect(outer.release()).resolves.toBeUndefined();
    });
  });
});
