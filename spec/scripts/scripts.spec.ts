import { redisPortOf } from '../../lib/redis/detect.js';
import { describe, expect, it } from 'vitest';
import { exclusiveWait, lockKeys } from '../../lib/keys.js';
import { LockScripts, WaiterMode, ScriptStatus } from '../../lib/scripts/registry.js';
import { useLockFixture } from '../helpers/fixtures.js';
import { fixedRequest, requestIds } from '../helpers/request-ids.js';
import type { CallRequest } from '../../lib/scripts/registry.js';

// The scripts called directly, without the client around them.
describe('Lua scripts', () => {
  const fx = useLockFixture();
  const rid = requestIds();
  const setup = () => {
    const redis = fx.redis();
    return { redis, scripts: new LockScripts(redisPortOf(redis, 'redis'), 'spec'), keys: lockKeys(fx.prefix, 'k') };
  };

  it('acquire: nil when acquired or re-entered, the holder PTTL otherwise', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.lock.acquire(keys, 'c1:1', 10_000, 'c1', WaiterMode.Single, rid())).toBeNull();
    expect(await scripts.lock.acquire(keys, 'c1:1', 10_000, 'c1', WaiterMode.Single, rid())).toBeNull();
    expect(await redis.hget(keys.lock, 'c1:1')).toBe('2');
    const ttl = await scripts.lock.acquire(keys, 'c2:1', 10_000, 'c2', WaiterMode.Single, rid());
    expect(ttl).toBeGreaterThan(9_000);
    expect(ttl).toBeLessThanOrEqual(10_000);
    // A single attempt leaves no waiter registration.
    expect(await redis.exists(keys.waiters)).toBe(0);
  });

  it('acquire: a waiting attempt registers its client once, in arrival order, with a TTL', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.lock.acquire(keys, 'h:1', 10_000, 'h', WaiterMode.Single, rid());
    await scripts.lock.acquire(keys, 'c1:1', 10_000, 'c1', WaiterMode.Alone, rid());
    await scripts.lock.acquire(keys, 'c2:1', 10_000, 'c2', WaiterMode.Alone, rid());
    await scripts.lock.acquire(keys, 'c1:2', 10_000, 'c1', WaiterMode.Shared, rid());
    expect(await redis.zrange(keys.waiters, 0, -1)).toEqual(['c1', 'c2']);
    const ttl = await redis.pttl(keys.waiters);
    expect(ttl).toBeGreaterThan(10_000);
    expect(ttl).toBeLessThanOrEqual(11_000);
  });

  it('acquire: success in Alone mode leaves the waiter set, in Shared mode stays', async () => {
    const { redis, scripts, keys } = setup();
    await redis.zadd(keys.waiters, 1, 'c1', 2, 'c2');
    expect(await scripts.lock.acquire(keys, 'c1:1', 1_000, 'c1', WaiterMode.Alone, rid())).toBeNull();
    expect(await redis.zrange(keys.waiters, 0, -1)).toEqual(['c2']);
    expect(await scripts.lock.acquire(keys, 'c2:1', 1_000, 'c2', WaiterMode.Shared, rid())).not.toBeNull();
    await redis.del(keys.lock);
    expect(await scripts.lock.acquire(keys, 'c2:1', 1_000, 'c2', WaiterMode.Shared, rid())).toBeNull();
    expect(await redis.zrange(keys.waiters, 0, -1)).toEqual(['c2']);
  });

  it('release: decrements once per request id, however often the call is resent', async () => {
    const { redis, scripts, keys } = setup();
    for (let i = 0; i < 3; i += 1) await scripts.lock.acquire(keys, 'o', 10_000, 'c', WaiterMode.Single, rid());
    expect(await scripts.lock.release(keys, 'o', 0, fixedRequest('req-1'), 'publish', 10_000)).toBe(2);
    expect(await scripts.lock.release(keys, 'o', 0, fixedRequest('req-1'), 'publish', 10_000)).toBe(2);
    expect(await scripts.lock.release(keys, 'o', 0, fixedRequest('req-2'), 'publish', 10_000)).toBe(1);
    expect(await scripts.lock.release(keys, 'o', 0, fixedRequest('req-1'), 'publish', 10_000)).toBe(2);
    expect(await scripts.lock.release(keys, 'o', 0, fixedRequest('req-2'), 'publish', 10_000)).toBe(1);
    expect(await redis.hget(keys.lock, 'o')).toBe('1');
    expect(await scripts.lock.release(keys, 'o', 0, fixedRequest('req-3'), 'publish', 10_000)).toBe(0);
    // The log lived in the hash: nothing is left once the lock is free.
    expect(await fx.keys(redis)).toEqual([]);
    expect(await scripts.lock.release(keys, 'o', 0, fixedRequest('req-4'), 'publish', 10_000)).toBe(ScriptStatus.NotHeld);
  });

  it('release: the log forgets the calls its client saw answered, however many there were', async () => {
    const { redis, scripts, keys } = setup();
    // One call at a time, numbered as a client's request window numbers them (gap 0).
    let seq = 0;
    const next = () => fixedRequest(`${(seq += 1).toString(36)}/0`);
    await scripts.lock.acquire(keys, 'o', 10_000, 'c', WaiterMode.Single, next());
    let last = next();
    for (let i = 0; i < 200; i += 1) {
      await scripts.lock.acquire(keys, 'o', 10_000, 'c', WaiterMode.Single, next());
      last = next();
      expect(await scripts.lock.release(keys, 'o', 0, last, 'publish', 10_000)).toBe(1);
    }
    // Pruned once past 256 characters (call-log.lua).
    expect((await redis.hget(keys.lock, 'log:o'))!.length).toBeLessThanOrEqual(256 + 8);
    // The latest call is still answered from the log.
    expect(await scripts.lock.release(keys, 'o', 0, last, 'publish', 10_000)).toBe(1);
  });

  it('release: the log keeps every call from the oldest in use on, and the calls of other clients', async () => {
    const { redis, scripts, keys } = setup();
    const call = (seq: number, oldest: number, tag = ''): CallRequest => fixedRequest(`${tag}${seq.toString(36)}/${(seq - oldest).toString(36)}`);
    await scripts.lock.acquire(keys, 'o', 10_000, 'c', WaiterMode.Single, call(1, 1));
    // 100 re-entries made while call 1 was in use: none may be forgotten, and each resend is answered.
    for (let seq = 2; seq <= 101; seq += 1) await scripts.lock.acquire(keys, 'o', 10_000, 'c', WaiterMode.Single, call(seq, 1));
    for (let seq = 1; seq <= 101; seq += 1) await scripts.lock.acquire(keys, 'o', 10_000, 'c', WaiterMode.Single, call(seq, 1));
    expect(await redis.hget(keys.lock, 'o')).toBe('101');
    // A call of another client (an adopter's: its client id as a tag), then one of this client with
    // none older in use: this client's answered calls go, the other client's call stays.
    expect(await scripts.lock.release(keys, 'o', 0, call(1, 1, 'x:'), 'publish', 10_000)).toBe(100);
    await scripts.lock.acquire(keys, 'o', 10_000, 'c', WaiterMode.Single, call(102, 102));
    expect(await redis.hget(keys.lock, 'log:o')).toBe('x:1=100;2u=101;');
    expect(await scripts.lock.release(keys, 'o', 0, call(1, 1, 'x:'), 'publish', 10_000)).toBe(100);
    expect(await redis.hget(keys.lock, 'o')).toBe('101');
  });

  it('release: re-expires remaining holds only when asked to', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.lock.acquire(keys, 'o', 5_000, 'c', WaiterMode.Single, rid());
    await scripts.lock.acquire(keys, 'o', 5_000, 'c', WaiterMode.Single, rid());
    await scripts.lock.release(keys, 'o', 0, fixedRequest('a'), 'publish', 10_000);
    expect(await redis.pttl(keys.lock)).toBeLessThanOrEqual(5_000);
    await scripts.lock.acquire(keys, 'o', 5_000, 'c', WaiterMode.Single, rid());
    await scripts.lock.release(keys, 'o', 30_000, fixedRequest('b'), 'publish', 10_000);
    expect(await redis.pttl(keys.lock)).toBeGreaterThan(29_000);
  });

  it('release: the final releases of one client share one record, which answers each resend and never shortens', async () => {
    const { redis, scripts, keys } = setup();
    // Two owners of client c, one after the other (the second re-entered), then every release resent.
    await scripts.lock.acquire(keys, 'c:1', 10_000, 'c', WaiterMode.Single, rid());
    expect(await scripts.lock.release(keys, 'c:1', 0, fixedRequest('r1'), 'publish', 20_000)).toBe(0);
    await scripts.lock.acquire(keys, 'c:2', 10_000, 'c', WaiterMode.Single, rid());
    await scripts.lock.acquire(keys, 'c:2', 10_000, 'c', WaiterMode.Single, rid());
    expect(await scripts.lock.release(keys, 'c:2', 0, fixedRequest('r2'), 'publish', 1_000)).toBe(1);
    expect(await scripts.lock.release(keys, 'c:2', 0, fixedRequest('r3'), 'publish', 1_000)).toBe(0);
    expect(await scripts.lock.release(keys, 'c:1', 0, fixedRequest('r1'), 'publish', 20_000)).toBe(0);
    expect(await scripts.lock.release(keys, 'c:2', 0, fixedRequest('r2'), 'publish', 1_000)).toBe(1);
    expect(await scripts.lock.release(keys, 'c:2', 0, fixedRequest('r3'), 'publish', 1_000)).toBe(0);
    // A release never sent before finds nothing held.
    expect(await scripts.lock.release(keys, 'c:2', 0, fixedRequest('r4'), 'publish', 1_000)).toBe(ScriptStatus.NotHeld);
    expect(await redis.keys(`${keys.records}*`)).toEqual([`${keys.records}r:c`]);
    // The later release's shorter record time did not cut the earlier one's.
    expect(await redis.pttl(`${keys.records}r:c`)).toBeGreaterThan(15_000);
    // Another client's final release has a record of its own; c's answers do not stand for it.
    await scripts.lock.acquire(keys, 'd:1', 10_000, 'd', WaiterMode.Single, rid());
    expect(await scripts.lock.release(keys, 'd:7', 0, fixedRequest('r1'), 'publish', 1_000)).toBe(ScriptStatus.NotHeld);
    expect(await scripts.lock.release(keys, 'd:1', 0, fixedRequest('r1'), 'publish', 1_000)).toBe(0);
    expect((await redis.keys(`${keys.records}*`)).sort()).toEqual([`${keys.records}r:c`, `${keys.records}r:d`]);
  });

  it('release: a final release with no older call in use replaces its client\'s record, keeping other clients\' entries', async () => {
    const { redis, scripts, keys } = setup();
    const record = `${keys.records}r:c`;
    // Calls 1 to 3 of client c in flight at once (gaps 1, 2): the record keeps each final release.
    await scripts.lock.acquire(keys, 'c:1', 10_000, 'c', WaiterMode.Single, fixedRequest('1/0'));
    expect(await scripts.lock.release(keys, 'c:1', 0, fixedRequest('2/1'), 'publish', 20_000)).toBe(0);
    await scripts.lock.acquire(keys, 'c:2', 10_000, 'c', WaiterMode.Single, fixedRequest('3/2'));
    // An adopter (client d) releases c:2 for it: its entry is d's, which c's window knows nothing of.
    expect(await scripts.lock.release(keys, 'c:2', 0, fixedRequest('d:9/0'), 'publish', 30_000)).toBe(0);
    expect(await redis.get(record)).toBe('1=1;2=0;3=1;d:9=0;');
    // Call 5 with gap 0: every own call below it was answered; one SET leaves its entry and d's.
    await scripts.lock.acquire(keys, 'c:3', 10_000, 'c', WaiterMode.Single, fixedRequest('4/0'));
    expect(await scripts.lock.release(keys, 'c:3', 0, fixedRequest('5/0'), 'publish', 1_000)).toBe(0);
    expect(await redis.get(record)).toBe('d:9=0;5=0;');
    // d's entry keeps the longest time any client asks for; its resend is still answered.
    expect(await redis.pttl(record)).toBeGreaterThan(30_000);
    expect(await scripts.lock.release(keys, 'c:2', 0, fixedRequest('d:9/0'), 'publish', 30_000)).toBe(0);
    expect(await scripts.lock.release(keys, 'c:3', 0, fixedRequest('5/0'), 'publish', 1_000)).toBe(0);
    // With no other client's entry, the record is one entry, at this release's time.
    await scripts.lock.acquire(keys, 'c:4', 10_000, 'c', WaiterMode.Single, fixedRequest('6/0'));
    await redis.set(record, '5=0;', 'PX', 1_000);
    expect(await scripts.lock.release(keys, 'c:4', 0, fixedRequest('7/0'), 'publish', 5_000)).toBe(0);
    expect(await redis.get(record)).toBe('7=0;');
    expect(await redis.pttl(record)).toBeGreaterThan(4_000);
    expect(await redis.pttl(record)).toBeLessThanOrEqual(5_000);
  });

  it('release and forceUnlock wake exactly one subscribed client; passWake hands on', async () => {
    const { redis, scripts, keys } = setup();
    const sub = fx.redis();
    const woken: string[] = [];
    sub.on('message', (channel: string) => woken.push(channel.slice(keys.wakePrefix.length)));
    await sub.subscribe(`${keys.wakePrefix}c1`, `${keys.wakePrefix}c2`);
    await redis.zadd(keys.waiters, 1, 'c1', 2, 'gone', 3, 'c2');

    await scripts.lock.acquire(keys, 'h', 10_000, 'h', WaiterMode.Single, rid());
    expect(await scripts.lock.release(keys, 'h', 0, fixedRequest('r1'), 'publish', 10_000)).toBe(0);
    await scripts.lock.acquire(keys, 'h', 10_000, 'h', WaiterMode.Single, rid());
    expect(await scripts.lock.forceUnlock(keys, 'publish', rid())).toBe(true);
    expect(await scripts.lock.forceUnlock(keys, 'publish', rid())).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // c1 first; then 'gone' (no subscriber) is skipped and dropped, and c2 is woken.
    expect(woken).toEqual(['c1', 'c2']);
    expect(await redis.exists(keys.waiters)).toBe(0);

    await redis.zadd(keys.waiters, 1, 'c1', 2, 'c2');
    expect(await scripts.lock.passWake(exclusiveWait(keys), 'c1', 'publish')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(woken).toEqual(['c1', 'c2', 'c2']);
    expect(await redis.exists(keys.waiters)).toBe(0);
  });

  it('renewMany: renews only where the expected owner holds; tells gone from taken', async () => {
    const { redis, scripts } = setup();
    const a = lockKeys(fx.prefix, 'a');
    const b = lockKeys(fx.prefix, 'b');
    const c = lockKeys(fx.prefix, 'c');
    await scripts.lock.acquire(a, 'o', 1_000, 'c', WaiterMode.Single, rid());
    await scripts.lock.acquire(b, 'other', 1_000, 'c', WaiterMode.Single, rid());
    expect(await scripts.renewal.renewMany('lock', [a.lock, b.lock, c.lock], ['o', 'o', 'o'], 20_000)).toEqual({ results: [1, 2, 0], acks: undefined });
    expect(await redis.pttl(a.lock)).toBeGreaterThan(19_000);
    expect(await redis.pttl(b.lock)).toBeLessThanOrEqual(1_000);
    expect(await redis.exists(c.lock)).toBe(0);
  });
});
