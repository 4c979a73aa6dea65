import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient, RedLock } from '../../lib/index.js';
import { RELEASE_TIMEOUT_MS } from '../../lib/options.js';
import { startFaultProxy, type FaultProxy } from '../../tools/fault-proxy.js';
import { sleep, until } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';

// A RedLock release decided by a majority may still fail on a minority node, where it is retried
// in the background. The owner's next release is another release: it must not be taken for a
// retry of the failed one on that node (that left the node's hold behind, renewed by nobody's
// wish, while the RedLock counted itself released).
describe('RedLock releases after one failed on a node', () => {
  const servers = useServers(3);
  let proxy: FaultProxy;

  beforeAll(async () => {
    proxy = await startFaultProxy(servers.list[0]!.port);
  });
  afterAll(async () => {
    await proxy.close();
  });

  it('each release takes its own hold off every node', async () => {
    const prefix = 'red-release-fail';
    const viaProxy = new Redis(proxy.url);
    viaProxy.on('error', () => undefined);
    servers.track({ close: () => Promise.resolve(viaProxy.disconnect()) });
    const clients = [viaProxy, ...servers.list.slice(1).map((server) => servers.connect(server))].map((redis) => {
      const client = new LockClient(redis, { keyPrefix: prefix });
      client.on('error', () => undefined);
      servers.track(client);
      return client;
    });
    const red = new RedLock(...clients.map((client) => client.getLock('job')));
    const admin = servers.connect(servers.list[0]!);
    const key = `{${prefix}:job}`;
    let owner = '';
    await clients[0]!.runInContext(async () => {
      const outer = await red.acquire({ leaseTime: 20_000 });
      owner = outer.owner;
      const inner = await red.acquire({ leaseTime: 20_000 });
      // A majority decides each round: node 0 (behind the proxy) may answer after it.
      await until(async () => (await admin.hget(key, owner)) === '2', 2_000);
      await sleep(50);
      // Node 0 goes silent: the inner release is decided by nodes 1 and 2; on node 0 it gets no
      // answer in time, and goes on in the background.
      proxy.blackhole();
      await inner.release();
      await sleep(RELEASE_TIMEOUT_MS + 200);
      proxy.heal();
      // The background retry hears back: node 0 has the outer hold only.
      await until(async () => (await admin.hget(key, owner)) === '1', 2_000);
      await sleep(100);
      await outer.release();
    });
    // The outer release took node 0's hold too.
    expect(await admin.hexists(key, owner)).toBe(0);
  }, 15_000);
});
