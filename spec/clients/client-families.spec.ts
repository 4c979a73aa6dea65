import { Redis as IoRedis } from 'ioredis';
import { createClient, createClientPool } from 'redis';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient, MultiLock, RedLock, type RedisConnection } from '../../lib/index.js';
import { spawnRedis } from '../../tools/redis-server.js';
import { connectStandalone, loadGlide, TEST_CLIENT, type TestClient } from '../helpers/clients.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

// Every supported client, whichever family the rest of the suite runs on: accepted and told apart
// by the constructor, or refused with an error that says what it was given.

const FAMILIES: readonly TestClient[] = ['ioredis', 'iovalkey', 'node-redis', 'node-redis-resp3', 'glide'];

describe('client families', () => {
  const fx = useLockFixture();
  beforeAll(loadGlide);

  const open = (client: TestClient, options = {}): RedisConnection => fx.track(connectStandalone(fx.url, options, client)).connection;

  it('the suite runs on the family RLOCK_TEST_CLIENT names', () => {
    const connection = fx.lockConnection() as unknown as Record<string, unknown>;
    const nodeRedis = '_self' in connection;
    expect(nodeRedis).toBe(TEST_CLIENT.startsWith('node-redis'));
    expect(typeof connection.customCommand === 'function').toBe(TEST_CLIENT === 'glide');
    if (nodeRedis) expect((connection.options as { RESP?: number }).RESP).toBe(TEST_CLIENT === 'node-redis-resp3' ? 3 : 2);
  });

  for (const family of FAMILIES) {
    it(`${family}: a lock is taken, held exclusively, re-entered, released, and a waiter is woken by the release`, async () => {
      const locks = fx.client({}, open(family));
      const rival = fx.client({}, open(family));
      const lock = locks.getLock('cycle');
      await locks.runInContext(async () => {
        await lock.lock(10_000);
        await lock.lock(10_000);
        expect(await lock.getHoldCount()).toBe(2);
      });
      expect(await rival.getLock('cycle').tryLock(0)).toBe(false);
      const started = performance.now();
      const waiting = rival.getLock('cycle').tryLock(5_000, 10_000);
      await sleep(50);
      await lock.forceUnlock();
      expect(await waiting).toBe(true);
      // Woken by the notice, not by the 10 s lease running out.
      expect(performance.now() - started).toBeLessThan(2_000);
      expect((await rival.getLock('cycle').getHolders()).length).toBe(1);
      const fenced = locks.getFencedLock('tokens');
      const first = await fenced.tryLockAndGetToken(0, 10_000);
      await fenced.unlock();
      expect(await fenced.tryLockAndGetToken(0, 10_000)).toBeGreaterThan(first!);
      await fenced.unlock();
      const sem = locks.getSemaphore('sem', { permits: 2 });
      const permit = await sem.acquire({ permits: 2 });
      expect(await sem.availablePermits()).toBe(0);
      await permit.release();
      expect(await sem.availablePermits()).toBe(2);
    });
  }

  it('a release wakes a waiter of another family, for every ordered pair of families', async () => {
    const admin = fx.redis();
    const clients = new Map(FAMILIES.map((family) => [family, { releaser: fx.client({}, open(family)), waiter: fx.client({}, open(family)) }]));
    for (const from of FAMILIES) {
      for (const to of FAMILIES.filter((family) => family !== from)) {
        const name = `pair-${from}-${to}`;
        const holder = clients.get(from)!.releaser.getLock(name);
        const waiter = clients.get(to)!.waiter.getLock(name);
        await holder.lock(60_000);
        const waiting = waiter.tryLock(3_000, 10_000);
        // Registered once subscribed: from then on only the notice wakes it before the 60 s lease ends.
        for (let i = 0; i < 250 && (await admin.zcard(`{${fx.prefix}:${name}}:waiters`)) === 0; i += 1) await sleep(20);
        const started = performance.now();
        await holder.unlock();
        expect(await waiting, `${from} → ${to}`).toBe(true);
        expect(performance.now() - started, `${from} → ${to}`).toBeLessThan(200);
        await waiter.unlock();
      }
    }
  });

  it('RedLock and MultiLock mix clients: one node per family, and one server seen through two clients', async () => {
    const servers = await Promise.all([spawnRedis(), spawnRedis(), spawnRedis()]);
    try {
      const families: TestClient[] = ['ioredis', 'node-redis', 'iovalkey'];
      const nodes = servers.map((server, i) => fx.client({}, fx.track(connectStandalone(server.url, {}, families[i])).connection));
      const rivals = servers.map((server, i) => fx.client({}, fx.track(connectStandalone(server.url, {}, families[(i + 1) % 3])).connection));
      const red = new RedLock(...nodes.map((client) => client.getLock('red')));
      const rivalRed = new RedLock(...rivals.map((client) => client.getLock('red')));
      await red.lock(10_000);
      expect(await rivalRed.tryLock(0)).toBe(false);
      await red.unlock();
      expect(await rivalRed.tryLock(0, 10_000)).toBe(true);
      await rivalRed.unlock();

      const multi = new MultiLock(fx.client({}, open('ioredis')).getLock('a'), fx.client({}, open('node-redis')).getLock('b'));
      const rivalB = fx.client({}, open('iovalkey')).getLock('b');
      await multi.lock(10_000);
      expect(await rivalB.tryLock(0)).toBe(false);
      await multi.unlock();
      expect(await rivalB.tryLock(0, 10_000)).toBe(true);
      await rivalB.unlock();
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  });

  it('RedLock refuses two nodes on one server, whichever clients reach it', () => {
    const a = fx.client({}, open('ioredis'));
    const b = fx.client({}, open('iovalkey'));
    expect(() => new RedLock(a.getLock('x'), b.getLock('x'))).toThrow(/same Redis server/);
  });

  it('node-redis 6 keyPrefix applies to every key, as ioredis keyPrefix does', async () => {
    const locks = fx.client({}, open('node-redis', { keyPrefix: 'app:' }));
    const lease = await locks.getLock('prefixed').acquire({ leaseTime: 10_000 });
    const admin = fx.redis();
    expect(await admin.exists(`app:{${fx.prefix}:prefixed}`)).toBe(1);
    expect(await admin.exists(`{${fx.prefix}:prefixed}`)).toBe(0);
    const rival = fx.client({}, open('node-redis', { keyPrefix: 'app:' }));
    const waiting = rival.getLock('prefixed').tryLock(5_000, 10_000);
    await sleep(50);
    const started = performance.now();
    await lease.release();
    expect(await waiting).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  describe('what the constructor refuses, before anything is sent', () => {
    const refused = (value: unknown, pattern: RegExp): void => {
      let error: unknown;
      try {
        new LockClient(value as RedisConnection);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(pattern);
    };

    it('an object of no supported client, null, a string', () => {
      refused({}, /got a plain object/);
      refused(null, /got null/);
      refused('redis://localhost', /got a string/);
      refused(new (class Database {})(), /class Database/);
    });

    it('a node-redis client that is not open yet', () => {
      refused(createClient({ url: fx.url }), /not open yet.*connect\(\)/);
    });

    it('a node-redis client pool', async () => {
      const pool = createClientPool({ url: fx.url });
      pool.on('error', () => undefined);
      await pool.connect();
      try {
        refused(pool, /pool/);
      } finally {
        pool.destroy();
      }
    });

    it('a connection already in subscriber mode (ioredis, node-redis RESP2)', async () => {
      const io = fx.redis();
      await io.subscribe(`${fx.prefix}:chan`);
      refused(io, /subscriber mode/);
      const node = createClient({ url: fx.url, RESP: 2 });
      node.on('error', () => undefined);
      await node.connect();
      try {
        await node.subscribe(`${fx.prefix}:chan`, () => undefined);
        refused(node, /subscriber mode/);
      } finally {
        node.destroy();
      }
    });

    it('a subscriber of another client family, or no client at all', () => {
      const main = open('node-redis');
      const io = new IoRedis(fx.url, { lazyConnect: true });
      expect(() => new LockClient(main, { subscriber: io })).toThrow(/same client as the main connection \(node-redis\)/);
      expect(() => new LockClient(open('ioredis'), { subscriber: open('node-redis') })).toThrow(/same client as the main connection/);
      expect(() => new LockClient(main, { subscriber: {} as RedisConnection })).toThrow(InvalidArgumentError);
      io.disconnect();
    });

    it('sharded pub/sub asked of a client that cannot keep it on a Cluster is refused; on a standalone server the option is moot', () => {
      const valkey = fx.track(connectStandalone(fx.url, {}, 'iovalkey')).connection;
      expect(fx.client({ pubsub: 'sharded' }, valkey)).toBeInstanceOf(LockClient);
    });
  });
});
