import { describe, expect, it } from 'vitest';
import { LockLostError, RedLock, type LeaseHandle, type LockClient, type LockClientOptions } from '../../lib/index.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { sleep, until } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';

// A RedLock over 3 masters whose node 0 is reached through the fault proxy: the proxy lets Redis
// run a call, swallows its reply and resets the socket; the client resends the call after it
// reconnects. The other two nodes decide the round meanwhile; node 0's extend or adopt, reaching
// Redis twice, is applied once.

describe('resend: a RedLock extend and adopt are applied once on a node', () => {
  const rig = useFaultRig();
  const servers = useServers(2);

  const proxied = async (options: LockClientOptions = {}): Promise<LockClient> => {
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    return rig.client(redis, options);
  };
  const direct = (options: LockClientOptions = {}): LockClient => rig.client(rig.lockConnect('direct'), options);
  const redLock = (node0: LockClient, options: LockClientOptions = {}): RedLock => {
    const others = servers.clients({ keyPrefix: rig.prefix, ...options });
    return new RedLock(node0.getLock('x'), ...others.map((client) => client.getLock('x')), { nodeTimeout: 500 });
  };
  const keyOnOthers = (): Promise<number[]> => Promise.all(servers.list.map((server) => servers.connect(server).exists(rig.key('x'))));

  it('an extend whose reply was lost on one node is not applied again by its resend', async () => {
    const lease = await redLock(await proxied()).acquire({ leaseTime: 5_000 });
    rig.proxy.swallowReplies(1, { thenBlackhole: true });
    // Decided by the two other nodes; node 0's call waits in the blackhole.
    await lease.extend(20_000);
    await until(() => rig.proxy.blackholed);
    // Applied once already on node 0: 20 s. Shorten it behind the client's back; a second
    // application of the resent call would make it 20 s again.
    expect(await rig.admin.pttl(rig.key('x'))).toBeGreaterThan(15_000);
    await rig.admin.pexpire(rig.key('x'), 3_000);
    await sleep(200); // reconnected; the resend waits in the blackhole
    rig.proxy.heal();
    await sleep(800);
    expect(await rig.admin.pttl(rig.key('x'))).toBeLessThanOrEqual(2_500);
    expect(lease.signal.aborted).toBe(false);
    await lease.release();
    expect(await rig.admin.exists(rig.key('x'))).toBe(0);
    expect(await keyOnOthers()).toEqual([0, 0]);
  });

  it('an adopt whose reply was lost on one node still adopts it there (its resend is answered), and nobody else can', async () => {
    const watchdogTimeout = 2_000;
    const lease = await redLock(direct({ watchdogTimeout }), { watchdogTimeout }).acquire();
    const handle = await lease.handOff();
    const adopter = redLock(await proxied({ watchdogTimeout }), { watchdogTimeout });
    rig.proxy.swallowReplies(1, { thenBlackhole: true });
    const adopted = await adopter.adopt(handle);
    await until(() => rig.proxy.blackholed);
    // Node 0's claim is taken in Redis: its member cannot be adopted by anyone else meanwhile.
    await expect(direct().adopt(handle.members![0] as LeaseHandle)).rejects.toBeInstanceOf(LockLostError);
    await sleep(200);
    rig.proxy.heal();
    // Node 0's answer joins the adopted hold: the adopter's watchdog renews it there past its lease.
    await sleep(1.5 * watchdogTimeout);
    expect(await rig.admin.pttl(rig.key('x'))).toBeGreaterThan(0);
    expect(adopted.signal.aborted).toBe(false);
    // Node 0 counts for the majority: with node 1's key gone, nodes 0 and 2 still hold it.
    await servers.connect(servers.list[0]!).del(rig.key('x'));
    await sleep(watchdogTimeout);
    expect(adopted.signal.aborted).toBe(false);
    await adopted.release();
    expect(await rig.admin.exists(rig.key('x'))).toBe(0);
    expect(await keyOnOthers()).toEqual([0, 0]);
  });
});
