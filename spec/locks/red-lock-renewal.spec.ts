import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { RedLock, type Lease, type LockClient } from '../../lib/index.js';
import { isIdentityKey, isRecord, sleep } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';

// A RedLock's node holds are renewed by their own clients' watchdogs, in the same batched call
// as every other hold of that client: many held RedLocks cost a call or two per node per tick,
// not one call per RedLock.
describe('RedLock renewal through the clients’ watchdogs', () => {
  const HELD = 200;
  const WATCHDOG_MS = 900;
  const servers = useServers(3);
  let admins: Redis[] = [];
  let clients: LockClient[] = [];

  beforeEach(() => {
    admins = servers.list.map((server) => servers.connect(server));
    clients = servers.clients({ keyPrefix: 'red-renew', watchdogTimeout: WATCHDOG_MS });
  });

  /** Script calls (EVALSHA and EVAL) each node has served since its stats were reset. */
  const scriptCalls = async (): Promise<number[]> =>
    Promise.all(
      admins.map(async (admin) => {
        const info = await admin.info('commandstats');
        let calls = 0;
        for (const match of info.matchAll(/cmdstat_(evalsha|eval):calls=(\d+)/g)) calls += Number(match[2]);
        return calls;
      }),
    );

  it(`${HELD} held RedLocks are renewed with a handful of calls per node per tick`, async () => {
    const leases: Lease[] = await Promise.all(
      // 200 calls at once on each node's one connection take longer than the 50 ms default nodeTimeout
      // on a loaded machine: this spec is about renewals, so the rounds get time.
      Array.from({ length: HELD }, (_, i) => new RedLock(...clients.map((client) => client.getLock(`job-${i}`)), { nodeTimeout: 1_000 }).acquire()),
    );
    const renewed: string[] = [];
    clients[0]!.on('renewed', (info) => renewed.push(info.name));
    // A round is decided by a majority: the slowest node's acquisitions may still be arriving.
    await sleep(200);
    await Promise.all(admins.map((admin) => admin.config('RESETSTAT')));
    // Three ticks (a tick every third of the watchdog timeout).
    await sleep(WATCHDOG_MS + 100);
    const calls = await scriptCalls();
    for (const [node, count] of calls.entries()) {
      // One batched call per tick (three or four ticks), far below one call per RedLock.
      expect(count, `node ${node}`).toBeGreaterThanOrEqual(2);
      expect(count, `node ${node}`).toBeLessThanOrEqual(8);
    }
    // Every RedLock counted its renewals, and none was lost.
    expect(new Set(renewed).size).toBe(HELD);
    expect(leases.every((lease) => !lease.signal.aborted)).toBe(true);
    await Promise.all(leases.map((lease) => lease.release()));
    // Nothing left but the short-lived records that answer resent releases.
    for (const admin of admins) {
      const [, keys] = await admin.scan('0', 'MATCH', '*', 'COUNT', 10_000);
      expect(keys.filter((key) => !isRecord(key) && !isIdentityKey(key))).toEqual([]);
    }
  });
});
