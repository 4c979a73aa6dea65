import { describe, expect, it } from 'vitest';
import { LockReplicationError } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { useSentinelRig } from '../helpers/sentinel-rig.js';
import { ON_GLIDE } from '../helpers/clients.js';

// Each test gets its own master + replica + 3 Sentinels: failover changes who is master.
// GLIDE has no Sentinel support: nothing here applies to it.
describe.skipIf(ON_GLIDE)('Sentinel', () => {
  const { setUp, client, direct } = useSentinelRig();

  it('locks and wakes waiters through a Sentinel-backed connection', async () => {
    const set = await setUp();
    const holder = client(set).getLock('via-sentinel');
    await holder.lock(60_000);
    expect(await direct(set.master.port).exists('{s:via-sentinel}')).toBe(1);
    const started = performance.now();
    const waiting = client(set).getLock('via-sentinel').tryLock(10_000, 1_000);
    await sleep(100);
    await holder.unlock();
    expect(await waiting).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 60_000);

  it('locking resumes after the master is killed and the replica is promoted', async () => {
    const set = await setUp();
    const locks = client(set);
    const lock = locks.getLock('failover');
    expect(await lock.tryLock(0, 5_000)).toBe(true);
    await lock.unlock();
    set.master.signal('SIGKILL');
    const promoted = await set.waitFailover(set.master.port);
    expect(promoted).toBe(set.replica.port);
    let got = false;
    for (let i = 0; i < 40 && !got; i += 1) got = await lock.tryLock(500, 5_000).catch(() => false);
    expect(got).toBe(true);
    expect(await direct(promoted).exists('{s:failover}')).toBe(1);
    await lock.unlock();
  }, 60_000);

  it('with syncReplicas, an acknowledged lock survives the failover', async () => {
    const set = await setUp();
    const locks = client(set, { syncReplicas: { replicas: 1, timeout: 1_000 } });
    const lease = await locks.getLock('kept').acquire({ leaseTime: 60_000 });
    // Killed right after the acknowledged acquisition: the replica has it.
    set.master.signal('SIGKILL');
    const promoted = await set.waitFailover(set.master.port);
    expect(await direct(promoted).hget('{s:kept}', lease.owner)).toBe('1');
    const other = client(set).getLock('kept');
    let answer: boolean | undefined;
    for (let i = 0; i < 40 && answer === undefined; i += 1) answer = await other.tryLock(0, 1_000).catch(() => undefined);
    expect(answer).toBe(false);
  }, 60_000);

  it('with syncReplicas, an acquisition no replica confirms is rolled back and rejected', async () => {
    const set = await setUp();
    const locks = client(set, { syncReplicas: { replicas: 1, timeout: 300 } });
    const lock = locks.getLock('unconfirmed');
    set.replica.signal('SIGSTOP');
    try {
      const error = await lock.tryLock(0, 10_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockReplicationError);
      expect(error).toMatchObject({ acks: 0, replicas: 1, lockName: 'unconfirmed' });
      expect(await direct(set.master.port).exists('{s:unconfirmed}')).toBe(0);
    } finally {
      set.replica.signal('SIGCONT');
    }
    expect(await lock.tryLock(0, 10_000)).toBe(true);
    await lock.unlock();
  }, 60_000);
});
