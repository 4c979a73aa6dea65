import { pathToFileURL } from 'node:url';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient, type Lease, type LockLostInfo } from '../../lib/index.js';
import { useRenewalWorkerScript } from '../../lib/renewal-thread/worker-script.js';
import { spawnCluster, type SpawnedCluster } from '../../tools/redis-cluster.js';
import { childBundle } from '../../tools/spec-children.js';
import { connectCluster, TEST_CLIENT } from '../helpers/clients.js';
import { sleep } from '../helpers/fixtures.js';

const LEASE_MS = 1_000;

// On a Cluster the thread renews one call per hash slot, on a Cluster client of its own.
describe('renewalThread on a Cluster', () => {
  let cluster: SpawnedCluster;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    useRenewalWorkerScript(pathToFileURL(childBundle('lib/renewal-thread/worker-main.ts')));
    cluster = await spawnCluster(3, 0, 1_000);
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster.stop();
    useRenewalWorkerScript(undefined);
  }, 60_000);

  it('holds in several slots are kept through a 3-lease block', async () => {
    const { connection, close } = connectCluster(cluster.startupNodes);
    closers.push(close);
    const seeds = cluster.startupNodes.map(({ host, port }) => `${host}:${port}`).join(',');
    const connect = new URL(`../helpers/renewal-connect.mjs?${new URLSearchParams({ family: TEST_CLIENT, cluster: seeds }).toString()}`, import.meta.url);
    const locks = new LockClient(connection, { keyPrefix: 'ct', watchdogTimeout: LEASE_MS, renewalThread: { connect, maxStall: 10_000 } });
    closers.push(() => locks.close());
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    locks.on('error', () => undefined);
    const names = Array.from({ length: 6 }, (_, i) => `slot-${i}`);
    const leases: Lease[] = [];
    for (const name of names) leases.push(await locks.getLock(name).acquire());
    const admin = new Cluster(cluster.startupNodes);
    closers.push(() => Promise.resolve(admin.disconnect()));
    await Promise.all(names.map((name) => admin.exists(`{ct:${name}}`)));
    await sleep(LEASE_MS / 2);
    const end = performance.now() + 3 * LEASE_MS;
    while (performance.now() < end) {
      // blocked
    }
    // Written before any timer of this thread runs: what Redis holds at the end of the block.
    expect(await Promise.all(names.map((name) => admin.exists(`{ct:${name}}`)))).toEqual(names.map(() => 1));
    await sleep(50);
    expect(lost).toEqual([]);
    for (const lease of leases) await lease.release();
  });
});
