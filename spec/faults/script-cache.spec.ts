import { describe, expect, it } from 'vitest';
import { until } from '../helpers/fixtures.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// A restarted Redis has an empty script cache. Calls a client sent back to back must still run in
// the order they were made: a call sent by its script's SHA, refused (NOSCRIPT) and sent again
// with its text, would otherwise run after the calls behind it, whose scripts another client had
// loaded meanwhile (a RedLock's undo of a late grant relies on this order).
describe('the script cache emptied by a restart', () => {
  const rig = useFaultRig();

  it('calls of one client run in the order they were made', async () => {
    const redis = rig.lockConnect('direct', { reconnectMs: 20 });
    const lock = rig.client(redis).getLock('order');
    // Every script used below has run on this connection.
    expect(await lock.tryLock(0, 10_000)).toBe(true);
    expect(await lock.forceUnlock()).toBe(true);

    await rig.server.stop();
    await rig.server.start();
    // The client reconnected (an answer on the new server).
    await until(() => ping(redis).then(() => true, () => false), 5_000);
    // Another client loads only the force-unlock script on the new server.
    await rig.client(rig.lockConnect('direct')).getLock('elsewhere').forceUnlock();

    // Sent back to back: the acquisition, then the force-unlock that must undo it.
    const [acquired, forced] = await Promise.all([lock.tryLock(0, 10_000), lock.forceUnlock()]);
    expect(acquired).toBe(true);
    expect(forced).toBe(true);
    expect(await rig.admin.exists(rig.key('order'))).toBe(0);
  });
});
