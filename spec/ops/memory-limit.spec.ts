import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { connectCluster, connectStandalone, type LockConnection } from '../helpers/clients.js';
import { sleep } from '../helpers/fixtures.js';
import { spawnCluster, type SpawnedCluster } from '../../tools/redis-cluster.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';

// Renewed every 300 ms: a hold not renewed at the limit ends within the wait below.
const LEASE_MS = 900;
const PREFIX = 'mem';

/**
 * Puts the server over its memory limit: `maxmemory` (noeviction) 128 kB below what it uses, as
 * when data outgrew the limit. (Right at the limit the state flickers: the refused write's own
 * buffer counted, and the next small write passes once it is freed.)
 */
async function overLimit(admin: Redis): Promise<void> {
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))?.[1]);
  await admin.config('SET', 'maxmemory', String(used - 128 * 1024));
}

/** Whether the server refuses a plain write for memory (it must, throughout). */
async function refusesWrites(admin: Redis, key: string): Promise<boolean> {
  return admin.set(key, 'x').then(
    () => false,
    (error: unknown) => String(error).includes('OOM'),
  );
}

/** What the watchdog did for each kind of hold while the server was at its memory limit. */
interface AtLimit {
  /** Per kind: renewed at the limit, or not renewed (then its lease ends). */
  readonly outcome: Record<'lock' | 'writeLock' | 'permit', 'renewed' | 'not renewed'>;
  /** The plain locks are still held after two leases at the limit. */
  readonly locksHeld: boolean;
  /** The `error` events' messages, each naming the refusal. */
  readonly errors: readonly string[];
  /** The server refused a plain write before and after: it was over its limit throughout. */
  readonly overLimit: boolean;
}

/**
 * Takes two plain locks (`names[0..1]`, on one node of a Cluster but in two slots: one renewal
 * call covers both), a write lock and a semaphore permit, puts the server they live on over its
 * memory limit and watches two leases' worth of renewals.
 */
async function renewalsAtLimit(locks: LockClient, admin: Redis, names: readonly string[]): Promise<AtLimit> {
  const [lockA, lockB, rwName, semName] = names as [string, string, string, string];
  const plain = [locks.getLock(lockA), locks.getLock(lockB)];
  for (const lock of plain) await lock.lock();
  await locks.getReadWriteLock(rwName).writeLock().lock();
  await locks.getSemaphore(semName, { permits: 2 }).acquire();

  await overLimit(admin);
  const refusedBefore = await refusesWrites(admin, `{${PREFIX}:${lockA}}:probe`);
  const renewed = new Set<string>();
  const errors: string[] = [];
  locks.on('renewed', ({ name }) => renewed.add(name));
  locks.on('error', (error: unknown) => void errors.push(error instanceof Error ? error.message : String(error)));
  await sleep(2 * LEASE_MS);
  const refusedAfter = await refusesWrites(admin, `{${PREFIX}:${lockA}}:probe`);
  const locksHeld = (await Promise.all(plain.map((lock) => lock.isHeldByCurrentOwner()))).every(Boolean);
  const state = (name: string): 'renewed' | 'not renewed' => (renewed.has(name) ? 'renewed' : 'not renewed');
  return {
    outcome: { lock: renewed.has(lockA) && renewed.has(lockB) ? 'renewed' : 'not renewed', writeLock: state(rwName), permit: state(semName) },
    locksHeld,
    errors,
    overLimit: refusedBefore && refusedAfter,
  };
}

// What both topologies must show: a plain lock's renewal only extends a TTL (PEXPIRE, which
// Redis allows at the limit), so it goes on; the write lock's and the permit's renewals write
// a lease end (HSET, ZADD), which Redis refuses at the limit, so those holds end with their lease.
const EXPECTED = { lock: 'renewed', writeLock: 'not renewed', permit: 'not renewed' };

describe('renewals at the memory limit (maxmemory, noeviction)', () => {
  const closers: (() => Promise<void>)[] = [];
  const client = (opened: LockConnection): LockClient => {
    const locks = new LockClient(opened.connection, { keyPrefix: PREFIX, watchdogTimeout: LEASE_MS });
    closers.push(async () => {
      await locks.close();
      await opened.close();
    });
    return locks;
  };
  // The clients go before their servers stop (each topology's own afterAll).
  const closeAll = async (): Promise<void> => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    closers.length = 0;
  };

  describe('standalone', () => {
    let server: SpawnedRedis;
    beforeAll(async () => {
      server = await spawnRedis();
    });
    afterAll(async () => {
      await closeAll();
      await server.stop();
    });

    it('a plain lock is renewed at the limit; a write lock and a permit are not', async () => {
      const admin = new Redis(server.url);
      closers.push(() => Promise.resolve(admin.disconnect()));
      const seen = await renewalsAtLimit(client(connectStandalone(server.url)), admin, ['a', 'b', 'rw', 'sem']);
      expect(seen.overLimit).toBe(true);
      expect(seen.outcome).toEqual(EXPECTED);
      expect(seen.locksHeld).toBe(true);
      expect(seen.errors.length).toBeGreaterThan(0);
      for (const message of seen.errors) expect(message).toMatch(/OOM/);
    });
  });

  describe('Cluster (one renewal call per node, keys of several slots)', () => {
    let cluster: SpawnedCluster;
    beforeAll(async () => {
      cluster = await spawnCluster(3, 0);
    }, 60_000);
    afterAll(async () => {
      await closeAll();
      await cluster.stop();
    }, 60_000);

    it('behaves as standalone: the plain locks renewed, the write lock and the permit not', async () => {
      // Names whose keys all live on the node that serves the first one, in two slots at least.
      const slotOf = (name: string): number => calculateSlot(`${PREFIX}:${name}`);
      const node = await cluster.masterOf(slotOf('a'));
      const names = ['a'];
      for (let i = 0; names.length < 4 && i < 1_000; i += 1) {
        const name = `n${i}`;
        if ((await cluster.masterOf(slotOf(name))) === node) names.push(name);
      }
      expect(names).toHaveLength(4);
      expect(slotOf(names[1]!)).not.toBe(slotOf(names[0]!));

      const admin = new Redis(node.port);
      closers.push(() => Promise.resolve(admin.disconnect()));
      const seen = await renewalsAtLimit(client(connectCluster(cluster.startupNodes)), admin, names);
      expect(seen.overLimit).toBe(true);
      expect(seen.outcome).toEqual(EXPECTED);
      expect(seen.locksHeld).toBe(true);
      expect(seen.errors.length).toBeGreaterThan(0);
      for (const message of seen.errors) expect(message).toMatch(/OOM/);
    }, 30_000);
  });
});
