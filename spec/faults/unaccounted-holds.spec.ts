import { describe, expect, it } from 'vitest';
import { sleep } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// Redis may keep a hold of an owner that the client never counted (a late grant whose undo was
// lost). Once the owner's last counted hold is released, nobody holds it: it must end with its
// lease, not be renewed for as long as the process lives.
describe('holds the client did not count', () => {
  const rig = useFaultRig();

  it('are not renewed after the owner released its last hold: the lock is free within a lease', async () => {
    const WATCHDOG_MS = 600;
    const client = rig.client(rig.lockConnect('direct'), { watchdogTimeout: WATCHDOG_MS });
    const lock = client.getLock('extra');
    await client.runInContext(async () => {
      const lease = await lock.acquire();
      // A second hold of the same owner that this client knows nothing of.
      await rig.admin.hincrby(rig.key('extra'), lease.owner, 1);
      await lease.release();
    });
    // Watchdog ticks come every third of the lease: three leases would have seen many renewals.
    await sleep(3 * WATCHDOG_MS);
    expect(await rig.admin.exists(rig.key('extra'))).toBe(0);
  });
});
