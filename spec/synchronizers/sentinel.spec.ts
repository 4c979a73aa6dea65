import { describe, expect, it } from 'vitest';
import { LockReplicationError, type LockClient } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { useSentinelRig } from '../helpers/sentinel-rig.js';
import type { SpawnedSentinelSet } from '../../tools/redis-sentinel.js';
import { ON_GLIDE } from '../helpers/clients.js';

// GLIDE has no Sentinel support: nothing here applies to it.
describe.skipIf(ON_GLIDE)('semaphore and latch through Sentinel', () => {
  const { setUp, client: sentinelClient, direct } = useSentinelRig();
  /** `keepCommands`: ioredis keeps commands through the failover instead of failing them after 20 retries. */
  const client = (set: SpawnedSentinelSet, keepCommands = false): LockClient =>
    sentinelClient(set, {}, keepCommands ? { maxRetriesPerRequest: null } : {});

  it('grants permits, wakes waiters and releases a latch through a Sentinel-backed connection', async () => {
    const set = await setUp();
    const [a, b] = [client(set), client(set)];
    const held = await a.getSemaphore('sem', { permits: 2 }).acquire({ permits: 2, leaseTime: 60_000 });
    expect(await direct(set.master.port).exists('{s:sem}:semaphore')).toBe(1);
    const started = performance.now();
    const waiting = b.getSemaphore('sem', { permits: 2 }).acquire({ waitTime: 10_000 });
    await sleep(100);
    expect(await b.getSemaphore('sem', { permits: 2 }).availablePermits()).toBe(0);
    await held.release();
    const permit = await waiting;
    // Woken by the release's notice, not by the 60 s lease running out.
    expect(performance.now() - started).toBeLessThan(5_000);
    await permit.release();
    expect(await b.getSemaphore('sem', { permits: 2 }).availablePermits()).toBe(2);

    const latch = a.getCountDownLatch('ready');
    expect(await latch.trySetCount(2)).toBe(true);
    const waiter = b.getCountDownLatch('ready').wait({ waitTime: 10_000 });
    await latch.countDown();
    await sleep(50);
    await latch.countDown();
    expect(await waiter).toBe(true);
    expect(await direct(set.master.port).exists('{s:ready}:latch')).toBe(0);
  }, 60_000);

  it('a waiter outlives the master being killed and the replica promoted; the limit holds there', async () => {
    const set = await setUp();
    const [a, b] = [client(set), client(set, true)];
    const sem = (locks: LockClient) => locks.getSemaphore('failover', { permits: 1 });
    // The only permit, on a short fixed lease: after failover nobody releases it, its lease ends.
    await sem(a).acquire({ leaseTime: 3_000 });
    await sleep(200); // replicated to the replica meanwhile
    const waiting = sem(b).acquire({ waitTime: 30_000, leaseTime: 20_000 });
    set.master.signal('SIGKILL');
    const promoted = await set.waitFailover(set.master.port);
    expect(promoted).toBe(set.replica.port);
    const permit = await waiting;
    expect(await direct(promoted).exists('{s:failover}:semaphore')).toBe(1);
    // The waiter's permit is out on the new master: nobody else gets one.
    expect(await sem(a).tryAcquire()).toBeNull();
    await permit.release();
    const again = await sem(a).tryAcquire({ waitTime: 5_000 });
    expect(again).not.toBeNull();
    await again!.release();
  }, 90_000);

  it('with syncReplicas, a permit no replica confirms is given back and rejected', async () => {
    const set = await setUp();
    const sem = sentinelClient(set, { syncReplicas: { replicas: 1, timeout: 300 } }).getSemaphore('unconfirmed', { permits: 1 });
    set.replica.signal('SIGSTOP');
    try {
      const error = await sem.tryAcquire({ leaseTime: 10_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockReplicationError);
      expect(error).toMatchObject({ acks: 0, replicas: 1, lockName: 'unconfirmed' });
      expect((error as Error).message).toMatch(/semaphore "unconfirmed" was confirmed by 0 of 1 replicas/);
      expect(await direct(set.master.port).exists('{s:unconfirmed}:semaphore')).toBe(0);
    } finally {
      set.replica.signal('SIGCONT');
    }
    const permit = await sem.tryAcquire({ leaseTime: 10_000 });
    expect(permit).not.toBeNull();
    // Confirmed: the replica has it before the call resolved.
    expect(await direct(set.replica.port).zscore('{s:unconfirmed}:semaphore', permit!.id)).not.toBeNull();
    await permit!.release();
  }, 60_000);
});
