import { redisPortOf } from '../../lib/redis/detect.js';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { lockKeys, type LockKeys } from '../../lib/keys.js';
import { LockScripts, ScriptStatus } from '../../lib/scripts/registry.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { fixedRequest, requestIds } from '../helpers/request-ids.js';

// The fair lock's scripts called directly, without the client around them.
describe('fair lock scripts', () => {
  const fx = useLockFixture();
  const rid = requestIds();
  const setup = () => {
    const redis = fx.redis();
    return { redis, scripts: new LockScripts(redisPortOf(redis, 'redis'), 'spec'), keys: lockKeys(fx.prefix, 'f') };
  };
  /** Subscribes to the turn channels of `clients`; collects [client, message] per notice. */
  const listen = async (keys: LockKeys, clients: string[]): Promise<[string, string][]> => {
    const sub = fx.redis();
    const heard: [string, string][] = [];
    sub.on('message', (channel: string, message: string) => heard.push([channel.slice(keys.turnPrefix.length), message]));
    await sub.subscribe(...clients.map((client) => keys.turnPrefix + client));
    return heard;
  };
  const queue = (redis: Redis, keys: LockKeys) => redis.zrange(keys.queue, 0, -1);

  it('acquire: queues waiters by arrival; a check-in keeps the place; the head acquires when free', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.fair.acquire(keys, 'h:1', 10_000, 'h|1', 5_000, rid())).toBeNull();
    for (const waiter of ['b|1', 'a|1', 'c|1']) {
      expect(await scripts.fair.acquire(keys, `${waiter}:o`, 10_000, waiter, 5_000, rid())).not.toBeNull();
    }
    // Checking in again (a, then b) keeps both places.
    await scripts.fair.acquire(keys, 'a|1:o', 10_000, 'a|1', 5_000, rid());
    await scripts.fair.acquire(keys, 'b|1:o', 10_000, 'b|1', 5_000, rid());
    expect(await queue(redis, keys)).toEqual(['b|1', 'a|1', 'c|1']);
    await redis.del(keys.lock);
    // Free, but not a's turn: b is ahead.
    expect(await scripts.fair.acquire(keys, 'a|1:o', 10_000, 'a|1', 5_000, rid())).not.toBeNull();
    expect(await scripts.fair.acquire(keys, 'b|1:o', 10_000, 'b|1', 5_000, rid())).toBeNull();
    expect(await redis.hget(keys.lock, 'b|1:o')).toBe('1');
    expect(await queue(redis, keys)).toEqual(['a|1', 'c|1']);
    expect(await redis.zrange(keys.queueTimeouts, 0, -1)).toHaveLength(2);
  });

  it('acquire: says when to ask again: the head by the holder TTL, the others by the waiter ahead', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.fair.acquire(keys, 'h:1', 3_000, 'h|1', 5_000, rid());
    const head = (await scripts.fair.acquire(keys, 'a:1', 10_000, 'a|1', 60_000, rid()))!;
    expect(head).toBeGreaterThan(2_500);
    expect(head).toBeLessThanOrEqual(3_000);
    // Behind a: a's place lasts 60 s unless it checks in.
    const second = (await scripts.fair.acquire(keys, 'b:1', 10_000, 'b|1', 1_000, rid()))!;
    expect(second).toBeGreaterThan(59_000);
    expect(second).toBeLessThanOrEqual(60_000);
    // The queue lives as long as the longest place in it, whatever the later callers' timeouts.
    expect(await redis.pttl(keys.queue)).toBeGreaterThan(59_000);
    expect(await redis.pttl(keys.queueTimeouts)).toBeGreaterThan(59_000);
  });

  it('acquire: a single attempt never queues; it needs a free lock and an empty queue, or re-enters', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.fair.acquire(keys, 'h:1', 10_000, '', 5_000, rid())).toBeNull();
    expect(await scripts.fair.acquire(keys, 'h:1', 10_000, '', 5_000, rid())).toBeNull();
    expect(await redis.hget(keys.lock, 'h:1')).toBe('2');
    expect(await scripts.fair.acquire(keys, 'x:1', 10_000, '', 5_000, rid())).toBe(0);
    expect(await redis.exists(keys.queue, keys.queueTimeouts)).toBe(0);
    await scripts.fair.acquire(keys, 'a:1', 10_000, 'a|1', 5_000, rid());
    await redis.del(keys.lock);
    expect(await scripts.fair.acquire(keys, 'x:1', 10_000, '', 5_000, rid())).toBe(0);
    expect(await redis.exists(keys.lock)).toBe(0);
  });

  it('acquire: drops waiters whose time ran out, at most 100 per call', async () => {
    const { redis, scripts, keys } = setup();
    const dead = Array.from({ length: 150 }, (_, i) => `dead|${i}`);
    await redis.zadd(keys.queue, ...dead.flatMap((waiter, i) => [i + 1, waiter]));
    await redis.zadd(keys.queueTimeouts, ...dead.flatMap((waiter) => [1, waiter]));
    expect(await scripts.fair.acquire(keys, 'x:1', 10_000, '', 5_000, rid())).toBe(0);
    expect(await redis.zcard(keys.queue)).toBe(50);
    expect(await redis.zcard(keys.queueTimeouts)).toBe(50);
    expect(await scripts.fair.acquire(keys, 'x:1', 10_000, '', 5_000, rid())).toBeNull();
    expect(await redis.exists(keys.queue, keys.queueTimeouts)).toBe(0);
  });

  it('acquire: a waiter that stopped checking in loses its place; the next one is head at once', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.fair.acquire(keys, 'h:1', 10_000, 'h|1', 5_000, rid());
    await scripts.fair.acquire(keys, 'a:1', 10_000, 'a|1', 200, rid());
    const wait = (await scripts.fair.acquire(keys, 'b:1', 10_000, 'b|1', 5_000, rid()))!;
    expect(wait).toBeLessThanOrEqual(200);
    await sleep(wait + 20);
    await redis.del(keys.lock);
    expect(await scripts.fair.acquire(keys, 'b:1', 10_000, 'b|1', 5_000, rid())).toBeNull();
    expect(await redis.exists(keys.queue, keys.queueTimeouts)).toBe(0);
  });

  it('release and forceUnlock tell only the head, naming the waiter; a head that leaves passes its turn on', async () => {
    const { redis, scripts, keys } = setup();
    const heard = await listen(keys, ['a', 'b', 'c']);
    await scripts.fair.acquire(keys, 'h:1', 10_000, 'h|1', 5_000, rid());
    for (const client of ['a', 'b', 'c']) await scripts.fair.acquire(keys, `${client}:1`, 10_000, `${client}|1`, 5_000, rid());
    expect(await scripts.fair.release(keys, 'h:1', 0, fixedRequest('r1'), 'publish', 10_000)).toBe(0);
    await sleep(50);
    expect(heard).toEqual([['a', 'a|1']]);
    // c leaves from behind: nobody else is told. Then a leaves without taking its turn: b is told.
    expect(await scripts.fair.leave(keys, 'c|1', 'publish')).toBe(true);
    expect(await scripts.fair.leave(keys, 'a|1', 'publish')).toBe(true);
    expect(await scripts.fair.leave(keys, 'a|1', 'publish')).toBe(false);
    await sleep(50);
    expect(heard).toEqual([
      ['a', 'a|1'],
      ['b', 'b|1'],
    ]);
    expect(await scripts.fair.acquire(keys, 'b:1', 10_000, 'b|1', 5_000, rid())).toBeNull();
    await scripts.fair.acquire(keys, 'a:1', 10_000, 'a|2', 5_000, rid());
    expect(await scripts.fair.forceUnlock(keys, 'publish', rid())).toBe(true);
    expect(await scripts.fair.forceUnlock(keys, 'publish', rid())).toBe(false);
    await sleep(50);
    expect(heard.at(-1)).toEqual(['a', 'a|2']);
    expect(await scripts.fair.leave(keys, 'a|2', 'publish')).toBe(true);
    expect(await fx.keys(redis)).toEqual([]);
  });

  it('release: one hold per request id, as for the non-fair lock', async () => {
    const { redis, scripts, keys } = setup();
    for (let i = 0; i < 2; i += 1) await scripts.fair.acquire(keys, 'o', 10_000, '', 5_000, rid());
    expect(await scripts.fair.release(keys, 'o', 0, fixedRequest('req-1'), 'publish', 10_000)).toBe(1);
    expect(await scripts.fair.release(keys, 'o', 0, fixedRequest('req-1'), 'publish', 10_000)).toBe(1);
    expect(await scripts.fair.release(keys, 'o', 0, fixedRequest('req-2'), 'publish', 10_000)).toBe(0);
    expect(await scripts.fair.release(keys, 'o', 0, fixedRequest('req-3'), 'publish', 10_000)).toBe(ScriptStatus.NotHeld);
    expect(await fx.keys(redis)).toEqual([]);
  });
});
