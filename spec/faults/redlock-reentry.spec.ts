import { describe, expect, it } from 'vitest';
import { LockLostError, LockNotHeldError, RedLock } from '../../lib/index.js';
import { freezeFor } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';

// A RedLock re-entered just as its holder's clock ends the node holds: the clock lets go of each
// node hold in Redis for the same owner, which may remove what the re-entry took there.
describe('RedLock re-entry across the end of its node holds', () => {
  const servers = useServers(3);

  it('a re-entry sent just before the clock ends its node holds is asked again, not believed on nodes it lost', async () => {
    const clients = servers.clients({ keyPrefix: 'red-reenter', watchdogTimeout: 300 });
    for (const client of clients) client.on('lost', () => undefined);
    const red = new RedLock(...clients.map((client) => client.getLock('frozen')));
    const rivalClients = servers.clients({ keyPrefix: 'red-reenter' });
    const rival = new RedLock(...rivalClients.map((client) => client.getLock('frozen')));
    await clients[0]!.runInContext(async () => {
      await red.lock();
      // The process freezes (as under SIGSTOP) past the lease: the keys expire on every node, and
      // neither the watchdogs nor the holder's clocks can run.
      freezeFor(700);
      // First thing after the freeze, before the clocks' timers end the node holds (and let go
      // of them in Redis for this owner): the same owner asks again.
      expect(await red.tryLock(2_000, 10_000)).toBe(true);
      // What it believes it holds, it holds: nobody else gets the lock.
      expect(await rival.tryLock(0, 10_000)).toBe(false);
      await red.unlock();
    });
    expect(await rival.tryLock(0, 10_000)).toBe(true);
    await rival.unlock();
  });

  it('a nested release that finds the RedLock gone after a freeze aborts the outer Lease too', async () => {
    // Found by the torture run (seed 2311, RedLock): the outer hold was believed 527 ms past the
    // wake-up, until its own release failed.
    const clients = servers.clients({ keyPrefix: 'red-nested' });
    const lost: unknown[] = [];
    for (const client of clients) client.on('lost', (info) => lost.push(info));
    const red = new RedLock(...clients.map((client) => client.getLock('frozen')));
    await clients[0]!.runInContext(async () => {
      const outer = await red.acquire({ leaseTime: 300 });
      const inner = await red.acquire({ leaseTime: 300 });
      // Frozen past both leases: the keys expire on every node.
      freezeFor(700);
      // First thing after the freeze, before the clocks' timers run: the inner hold is released.
      await expect(inner.release()).rejects.toBeInstanceOf(LockNotHeldError);
      // The holder learns that what it still believes it holds is gone too.
      expect(outer.signal.aborted).toBe(true);
      expect(outer.signal.reason).toBeInstanceOf(LockLostError);
      expect(lost).toHaveLength(1);
      await expect(outer.release()).resolves.toBeUndefined();
    });
  });
});
