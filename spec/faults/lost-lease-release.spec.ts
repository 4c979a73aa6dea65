import { describe, expect, it } from 'vitest';
import { RedLock, type Lease, type RLock } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf } from '../helpers/lock-kinds.js';

// A hold the holder was told it lost is let go of in Redis by the client itself (its counts, in
// the background). A re-entry of the same owner sent before the loss and answered after it is a
// new hold. Releasing the lost hold's Lease afterwards must not take a count of that new hold:
// Redis would free the lock under a Lease that is still believed. (Found by the torture run: a
// burst of re-entries answered after its outer hold reached maxHoldTime.)
describe('the Lease of a lost hold', () => {
  const rig = useFaultRig();

  // A RedLock of one node (its majority is that node), so the answers of its whole round come late.
  for (const kind of [...KINDS, 'redlock'] as const) {
    it(`releases nothing of its owner's next hold > ${kind}`, async () => {
      const locks = rig.client(rig.lockConnect('proxy'));
      const lost: string[] = [];
      locks.on('lost', (info) => lost.push(info.reason));
      const rivals = rig.client(rig.lockConnect('direct'));
      const lockOn = (client: typeof locks, as: typeof kind): RLock =>
        as === 'redlock' ? new RedLock(client.getLock('next-hold'), { nodeTimeout: 2_000 }) : lockOf(client, as, 'next-hold');
      const lock = lockOn(locks, kind);
      const rival = lockOn(rivals, kind === 'read' ? 'write' : kind);
      await locks.runInContext(async () => {
        const outer = await lock.acquire({ maxHoldTime: 600 });
        await sleep(250);
        // The re-entry runs in Redis at once; its answer comes after the cap ended the outer hold.
        rig.proxy.latency({ down: 700 });
        const pending = lock.acquire({ leaseTime: 10_000 });
        const inner: Lease = await pending;
        rig.proxy.latency({});
        expect(lost).toEqual(['max-hold-time']);
        expect(outer.signal.aborted).toBe(true);
        expect(inner.signal.aborted).toBe(false);
        // The lost Lease's release is no news, and sends nothing: the re-entry's hold stays.
        await outer.release();
        await sleep(100);
        expect(await rival.tryLock(0, 10_000)).toBe(false);
        expect(inner.signal.aborted).toBe(false);
        await inner.release();
      });
      expect(await rival.tryLock(2_000, 10_000)).toBe(true);
    });
  }
});
