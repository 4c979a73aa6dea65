import type { GlideClient } from '@valkey/valkey-glide';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient, LockRedisError, type RedisConnection } from '../../lib/index.js';
import { redisPortOf } from '../../lib/redis/detect.js';
import { connectStandalone, loadGlide } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { sleep, until } from '../helpers/fixtures.js';

// Valkey GLIDE, whichever family the rest of the suite runs on: told apart by the constructor
// (GlideClient, GlideClusterClient), its pub/sub client made by rlock from the application
// client's settings or taken as `subscriber`, its lost answers (reset, requestTimeout) resent.

type Glide = typeof import('../helpers/glide-clients.js');
let glide: Glide;
beforeAll(async () => {
  await loadGlide();
  glide = await import('../helpers/glide-clients.js');
});

describe('Valkey GLIDE', () => {
  const rig = useFaultRig();
  const made: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of made.splice(0).reverse()) await close().catch(() => undefined);
  });
  const open = (extra: Parameters<Glide['glideStandalone']>[2] = {}, via: 'proxy' | 'direct' = 'direct'): GlideClient => {
    const { client, close } = glide.glideStandalone(via === 'proxy' ? rig.proxy.url : rig.server.url, 100, extra);
    made.push(close);
    return client;
  };
  const locksOn = (connection: RedisConnection, options = {}): LockClient => {
    const locks = new LockClient(connection, { keyPrefix: rig.prefix, ...options });
    locks.on('error', () => undefined);
    made.push(() => locks.close());
    return locks;
  };
  const pubsubClients = async (): Promise<number> => String(await rig.admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n').filter(Boolean).length;

  it('a GlideClient is told apart: standalone, no key prefix, its address and database', () => {
    const port = redisPortOf(open({ databaseId: 2 }), 'redis');
    expect([port.family, port.deployment, port.keyPrefix, port.db]).toEqual(['glide', 'standalone', '', 2]);
    expect(port.address).toBe(`127.0.0.1:${rig.server.port}`);
  });

  it('a GlideClusterClient is told apart as a Cluster with sharded pub/sub', async () => {
    const { client, close } = glide.glideCluster([{ host: '127.0.0.1', port: rig.server.port }], 100);
    made.push(close);
    const port = redisPortOf(client, 'redis');
    expect([port.family, port.deployment, port.shardedPubSub]).toEqual(['glide', 'cluster', true]);
    await close();
  });

  it('rlock opens its own pub/sub client from the application client’s settings, and closes only that one', async () => {
    const app = open();
    const before = await pubsubClients();
    const locks = locksOn(app);
    const holder = await locks.getLock('own').acquire({ leaseTime: 10_000 });
    const waiting = locksOn(app).getLock('own').tryLock(5_000, 10_000);
    await until(async () => (await pubsubClients()) === before + 1);
    const started = performance.now();
    await holder.release();
    expect(await waiting).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
    await Promise.all(made.splice(1).map((close) => close()));
    await until(async () => (await pubsubClients()) === before);
    expect(await app.customCommand(['PING'])).toBe('PONG');
  });

  it('rlock’s own pub/sub client goes when its last channel is left, and the next wait makes another that is woken', async () => {
    const app = open();
    const before = await pubsubClients();
    const holder = locksOn(app);
    const waiter = locksOn(app);
    const waitOnce = async (): Promise<number> => {
      const held = await holder.getLock('again').acquire({ leaseTime: 10_000 });
      const waiting = waiter.getLock('again').tryLock(5_000, 10_000);
      await until(async () => (await pubsubClients()) === before + 1);
      const started = performance.now();
      await held.release();
      expect(await waiting).toBe(true);
      const wokenMs = performance.now() - started;
      await waiter.getLock('again').unlock();
      return wokenMs;
    };
    expect(await waitOnce()).toBeLessThan(1_000);
    // After the waiters' linger the channel is left: the client is closed, not kept open idle.
    await until(async () => (await pubsubClients()) === before, 5_000);
    expect(await waitOnce()).toBeLessThan(1_000);
  });

  it('a subscriber of GLIDE is read from its message queue; rlock leaves its channels and keeps it open', async () => {
    const before = await pubsubClients();
    const subscriber = open();
    const locks = locksOn(open(), { subscriber });
    const holder = await locksOn(open()).getLock('given').acquire({ leaseTime: 10_000 });
    const waiting = locks.getLock('given').tryLock(5_000, 10_000);
    await until(async () => (await pubsubClients()) === before + 1);
    await holder.release();
    expect(await waiting).toBe(true);
    await locks.close();
    await until(async () => (await pubsubClients()) === before);
    expect(await subscriber.customCommand(['PING'])).toBe('PONG');
  });

  it('without readable settings rlock asks for a subscriber, and takes one', () => {
    const hidden = open();
    Object.defineProperty(hidden, 'config', { value: undefined });
    expect(() => new LockClient(hidden)).toThrow(InvalidArgumentError);
    expect(() => new LockClient(hidden)).toThrow(/pass one as the `subscriber` option/);
    expect(() => locksOn(hidden, { subscriber: open() })).not.toThrow();
  });

  it('refuses a subscriber of another family, of the other GLIDE kind, or made with its own callback', () => {
    const main = open();
    expect(() => new LockClient(main, { subscriber: connectStandalone(rig.server.url, {}, 'ioredis').connection })).toThrow(
      /same client as the main connection \(glide\); got an ioredis/,
    );
    expect(() => new LockClient(connectStandalone(rig.server.url, {}, 'ioredis').connection, { subscriber: main })).toThrow(/got a GLIDE GlideClient/);
    const { client: cluster, close } = glide.glideCluster([{ host: '127.0.0.1', port: rig.server.port }], 100);
    made.push(close);
    expect(() => new LockClient(main, { subscriber: cluster })).toThrow(/must be a GLIDE GlideClient, like the main client/);
    const withCallback = open({ pubsubSubscriptions: { channelsAndPatterns: {}, callback: () => undefined } });
    expect(() => new LockClient(main, { subscriber: withCallback })).toThrow(/made with a pubsubSubscriptions callback/);
  });

  it('refuses a syncReplicas timeout GLIDE would cut short (requestTimeout)', () => {
    expect(() => new LockClient(open(), { syncReplicas: { replicas: 1, timeout: 5_000 } })).toThrow(/shorter than the client's own reply timeout \(glide requestTimeout, 5000 ms\)/);
    expect(() => new LockClient(open({ requestTimeout: undefined }), { syncReplicas: { replicas: 1, timeout: 250 } })).toThrow(/250 ms/);
  });

  it('a call the application closed its client under rejects with a LockRedisError that says so', async () => {
    const app = open();
    const lock = locksOn(app).getLock('closed');
    await lock.tryLock(0, 1_000);
    app.close();
    const error = await lock.tryLock(0, 1_000).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockRedisError);
    expect((error as Error).message).toMatch(/the GLIDE client was closed/);
  });

  it('an answer later than requestTimeout (250 ms, the default) is a lost answer: resent, the acquisition counts once', async () => {
    const app = open({ requestTimeout: undefined }, 'proxy');
    await app.customCommand(['PING']);
    const lock = locksOn(app).getLock('late');
    rig.proxy.latency({ down: 400 });
    const acquiring = lock.tryLock(0, 10_000);
    // The first copy runs in Redis at once; its answer, and those of the resends, come too late.
    await until(async () => (await rig.admin.exists(rig.key('late'))) === 1);
    await sleep(300);
    rig.proxy.latency({});
    expect(await acquiring).toBe(true);
    expect(await lock.getHoldCount()).toBe(1);
    await lock.unlock();
    expect(await rig.admin.exists(rig.key('late'))).toBe(0);
  });

  it('a waiter whose subscriber reconnected unseen re-asks: a release published meanwhile does not leave it asleep', async () => {
    const holder = await locksOn(open()).getLock('gap').acquire({ leaseTime: 20_000 });
    const subscriber = open({}, 'proxy');
    await subscriber.customCommand(['PING']);
    const before = await pubsubClients();
    const waiting = locksOn(open(), { subscriber }).getLock('gap').tryLock(8_000, 10_000);
    await until(async () => (await pubsubClients()) === before + 1);
    // The release is published while the subscriber is cut off; it reconnects afterwards.
    rig.proxy.blackhole({ drop: true });
    await sleep(50);
    await holder.release();
    rig.proxy.heal();
    rig.proxy.resetAll();
    const released = performance.now();
    expect(await waiting).toBe(true);
    // The reconnect is seen within a recheck (1 s), not at the end of the wait (8 s).
    expect(performance.now() - released).toBeLessThan(3_000);
  });
});
