import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LockClient, RedLock, type Lease, type LockLostInfo, type RedisConnection, type RLock } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';
import { ON_GLIDE } from '../helpers/clients.js';

// ioredis' own `keyPrefix` prefixes KEYS of every command it sends, not script ARGV. Every key
// rlock touches (acquire, renew, release, wake-up) must be the prefixed one, or watchdog
// renewals miss the lock and it is lost after one lease.

const APP = 'app:';
const WATCHDOG_MS = 900;
/** Three renewals (every WATCHDOG_MS / 3) and more. */
const HOLD_MS = 1_500;
const NAME = 'prefixed';

interface Kind {
  readonly kind: string;
  readonly lock: (client: LockClient, name: string) => RLock;
  readonly rival: (client: LockClient, name: string) => RLock;
}

const KINDS: Kind[] = [
  { kind: 'getLock', lock: (c, n) => c.getLock(n), rival: (c, n) => c.getLock(n) },
  { kind: 'getFencedLock', lock: (c, n) => c.getFencedLock(n), rival: (c, n) => c.getFencedLock(n) },
  { kind: 'getFairLock', lock: (c, n) => c.getFairLock(n), rival: (c, n) => c.getFairLock(n) },
  { kind: 'writeLock', lock: (c, n) => c.getReadWriteLock(n).writeLock(), rival: (c, n) => c.getReadWriteLock(n).writeLock() },
  { kind: 'readLock', lock: (c, n) => c.getReadWriteLock(n).readLock(), rival: (c, n) => c.getReadWriteLock(n).writeLock() },
];

/** Records `lost` events and `error` events of a client. */
function watch(client: LockClient): { lost: LockLostInfo[]; errors: unknown[] } {
  const seen = { lost: [] as LockLostInfo[], errors: [] as unknown[] };
  client.on('lost', (info) => seen.lost.push(info));
  client.on('error', (error) => seen.errors.push(error));
  return seen;
}

// GLIDE has no key prefix of its own: nothing here applies to it.
describe.skipIf(ON_GLIDE)('a connection with the client’s own keyPrefix', () => {
  const f = useLockFixture();
  // The client under test's own keyPrefix (ioredis, iovalkey, node-redis 6).
  const prefixed = (): RedisConnection => f.lockConnection({ keyPrefix: APP });
  /** The lock's key as Redis sees it. */
  const lockKey = (): string => `${APP}{${f.prefix}:${NAME}}`;

  describe.each(KINDS)('$kind in watchdog mode', ({ lock: lockOf, rival: rivalOf }) => {
    it('stays held through renewals', async () => {
      const locks = f.client({ watchdogTimeout: WATCHDOG_MS }, prefixed());
      const rival = f.client({ watchdogTimeout: WATCHDOG_MS }, prefixed());
      const seen = watch(locks);
      const lease = await lockOf(locks, NAME).acquire();
      await sleep(HOLD_MS);
      expect(seen.lost.map((info) => info.reason)).toEqual([]);
      expect(lease.signal.aborted).toBe(false);
      // Renewed every 300 ms to 900 ms: a fresh TTL, on the prefixed key.
      expect(await f.redis().pttl(lockKey())).toBeGreaterThan(WATCHDOG_MS / 3);
      expect(await rivalOf(rival, NAME).tryLock(0)).toBe(false);
      await lease.release();
      expect(await f.redis().exists(lockKey())).toBe(0);
      expect(seen.errors).toEqual([]);
    });
  });

  // Must keep working: wake-up channels are published under the prefix and subscribed to with it.
  const WAKES: { case: string; holder: (c: LockClient) => RLock; waiter: (c: LockClient) => RLock }[] = [
    { case: 'getLock', holder: (c) => c.getLock(NAME), waiter: (c) => c.getLock(NAME) },
    { case: 'getFairLock', holder: (c) => c.getFairLock(NAME), waiter: (c) => c.getFairLock(NAME) },
    { case: 'reader after a writer', holder: (c) => c.getReadWriteLock(NAME).writeLock(), waiter: (c) => c.getReadWriteLock(NAME).readLock() },
    { case: 'writer after a reader', holder: (c) => c.getReadWriteLock(NAME).readLock(), waiter: (c) => c.getReadWriteLock(NAME).writeLock() },
  ];

  it.each(WAKES)('$case: a release wakes a waiter promptly', async ({ holder, waiter }) => {
    const locks = f.client({}, prefixed());
    const other = f.client({}, prefixed());
    const lease = await holder(locks).acquire({ leaseTime: 20_000 });
    const waiting = waitFor(waiter(other));
    await sleep(300);
    expect(waiting.settled()).toBe(false);
    const releasedAt = performance.now();
    await lease.release();
    expect(await waiting.done).toBe(true);
    expect(performance.now() - releasedAt).toBeLessThan(500);
  });
});

/** Waits (10 s at most) for the lock, then releases it: `done` is whether it got it. */
function waitFor(lock: RLock): { done: Promise<boolean>; settled: () => boolean } {
  let settled = false;
  const done = lock
    .withLock(() => true, { waitTime: 10_000 })
    .catch(() => false)
    .finally(() => (settled = true));
  return { done, settled: () => settled };
}

// GLIDE has no key prefix of its own: nothing here applies to it.
describe.skipIf(ON_GLIDE)('RedLock over 3 servers whose connections have a keyPrefix', () => {
  const servers = useServers(3);
  let prefix = '';

  const redLock = (): { red: RedLock; home: LockClient } => {
    const clients = servers.clients({ keyPrefix: prefix, watchdogTimeout: WATCHDOG_MS }, { keyPrefix: APP, maxRetriesPerRequest: 1 });
    return { red: new RedLock(...clients.map((client) => client.getLock(NAME))), home: clients[0]! };
  };
  const nodeTtls = (): Promise<number[]> =>
    Promise.all(servers.list.map((server) => servers.connect(server).pttl(`${APP}{${prefix}:${NAME}}`)));

  it('stays held through renewals in watchdog mode', async () => {
    prefix = `rlt-${randomUUID().slice(0, 8)}`;
    const { red, home } = redLock();
    const { red: rival } = redLock();
    const seen = watch(home);
    const lease: Lease = await red.acquire();
    await sleep(HOLD_MS);
    expect(seen.lost.map((info) => info.reason)).toEqual([]);
    expect(lease.signal.aborted).toBe(false);
    for (const ttl of await nodeTtls()) expect(ttl).toBeGreaterThan(WATCHDOG_MS / 3);
    expect(await rival.tryLock(0)).toBe(false);
    await lease.release();
    expect(await nodeTtls()).toEqual([-2, -2, -2]);
  });

  it('a release wakes a waiting RedLock promptly (must keep working)', async () => {
    prefix = `rlt-${randomUUID().slice(0, 8)}`;
    const { red } = redLock();
    const { red: other } = redLock();
    const lease = await red.acquire({ leaseTime: 20_000 });
    const waiting = waitFor(other);
    await sleep(300);
    expect(waiting.settled()).toBe(false);
    const releasedAt = performance.now();
    await lease.release();
    expect(await waiting.done).toBe(true);
    expect(performance.now() - releasedAt).toBeLessThan(500);
  });
});
