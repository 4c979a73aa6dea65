import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient, type LockWarningInfo } from '../../lib/index.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';

/** Process warnings of rlock seen while `fn` runs (and a moment after). */
async function processWarnings(fn: () => Promise<void>): Promise<Error[]> {
  const seen: Error[] = [];
  const onWarning = (warning: Error): void => {
    if (warning.name === 'RLockWarning') seen.push(warning);
  };
  process.on('warning', onWarning);
  try {
    await fn();
    await sleep(100);
  } finally {
    process.off('warning', onWarning);
  }
  return seen;
}

describe('eviction-policy check at first use', () => {
  let server: SpawnedRedis;
  const connections: Redis[] = [];
  const clients: LockClient[] = [];
  const client = (url: string, options: { username?: string; password?: string } = {}): LockClient => {
    const conn = new Redis(url, options);
    conn.on('error', () => undefined);
    connections.push(conn);
    const locks = new LockClient(conn, { keyPrefix: 'evict' });
    clients.push(locks);
    return locks;
  };

  beforeAll(async () => {
    server = await spawnRedis(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
  });
  afterAll(async () => {
    for (const locks of clients) await locks.close();
    for (const conn of connections) conn.disconnect();
    await server.stop();
  });

  it('allkeys-lru: warns once, with the fix, as a `warning` event and one process warning', async () => {
    const locks = client(server.url);
    const warnings: LockWarningInfo[] = [];
    locks.on('warning', (info) => warnings.push(info));
    const seen = await processWarnings(async () => {
      const lock = locks.getLock('a');
      await lock.lock();
      await until(() => warnings.length > 0, 2_000);
      await lock.unlock();
      await locks.getLock('b').tryLock();
      await locks.getLock('b').unlock();
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'RLOCK_EVICTION_POLICY', policy: 'allkeys-lru', server: `127.0.0.1:${server.port}` });
    expect(warnings[0]!.message).toContain('noeviction');
    expect(seen.map((w) => (w as Error & { code?: string }).code)).toEqual(['RLOCK_EVICTION_POLICY']);
    expect(seen[0]!.message).toContain('maxmemory-policy allkeys-lru');

    // Another client in the same process: its own event, no second process warning.
    const other = client(server.url);
    const again: LockWarningInfo[] = [];
    other.on('warning', (info) => again.push(info));
    const seenAgain = await processWarnings(async () => {
      await other.getLock('c').tryLock();
      await until(() => again.length > 0, 2_000);
    });
    expect(again).toHaveLength(1);
    expect(seenAgain).toEqual([]);
  });

  it('volatile-ttl warns too; noeviction does not', async () => {
    const admin = new Redis(server.url);
    connections.push(admin);
    await admin.config('SET', 'maxmemory-policy', 'volatile-ttl');
    const volatile: LockWarningInfo[] = [];
    const a = client(server.url);
    a.on('warning', (info) => volatile.push(info));
    await a.getLock('v').tryLock();
    await until(() => volatile.length > 0, 2_000);
    expect(volatile[0]!.policy).toBe('volatile-ttl');

    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    const none: LockWarningInfo[] = [];
    const b = client(server.url);
    b.on('warning', (info) => none.push(info));
    await b.getLock('n').tryLock();
    await sleep(150);
    expect(none).toEqual([]);
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
  });

  it('skips quietly when an ACL forbids INFO; locks work as ever', async () => {
    const admin = new Redis(server.url);
    connections.push(admin);
    await admin.call('ACL', 'SETUSER', 'noinfo', 'on', '>pw', '~*', '&*', '+@all', '-info');
    const locks = new Redis(server.url, { username: 'noinfo', password: 'pw', enableReadyCheck: false });
    locks.on('error', () => undefined);
    connections.push(locks);
    const lockClient = new LockClient(locks, { keyPrefix: 'evict' });
    clients.push(lockClient);
    const warnings: LockWarningInfo[] = [];
    const errors: unknown[] = [];
    lockClient.on('warning', (info) => warnings.push(info));
    lockClient.on('error', (error) => errors.push(error));
    const lock = lockClient.getLock('acl');
    await lock.lock();
    await lock.unlock();
    await sleep(150);
    expect(warnings).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('eviction-policy check on the shared test server (noeviction)', () => {
  const fx = useLockFixture();
  it('says nothing', async () => {
    const locks = fx.client();
    const warnings: LockWarningInfo[] = [];
    locks.on('warning', (info) => warnings.push(info));
    await locks.getLock('quiet').tryLock();
    await sleep(100);
    expect(warnings).toEqual([]);
    await locks.getLock('quiet').unlock();
  });
});
