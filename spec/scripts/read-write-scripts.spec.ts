import { redisPortOf } from '../../lib/redis/detect.js';
import { describe, expect, it } from 'vitest';
import { fencedLockKeys, readWriteKeys } from '../../lib/keys.js';
import { LockScripts, WaiterMode, ScriptStatus } from '../../lib/scripts/registry.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { fixedRequest, requestIds } from '../helpers/request-ids.js';

// The read-write and fenced scripts called directly, without the client around them.
describe('read-write and fenced lock scripts', () => {
  const fx = useLockFixture();
  const rid = requestIds();
  const setup = () => {
    const redis = fx.redis();
    return { redis, scripts: new LockScripts(redisPortOf(redis, 'redis'), 'spec'), keys: readWriteKeys(fx.prefix, 'rw') };
  };

  it('the lock lives as long as its longest hold; a reader whose lease ended is dropped', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.readWrite.readAcquire(keys, 'long', 5_000, 'c', WaiterMode.Single, rid())).toBeNull();
    expect(await scripts.readWrite.readAcquire(keys, 'short', 200, 'c', WaiterMode.Single, rid())).toBeNull();
    for (const key of [keys.lock, keys.readers]) expect(await redis.pttl(key)).toBeGreaterThan(4_500);
    expect(await redis.zrange(keys.readers, 0, -1)).toEqual(['short', 'long']);
    await sleep(300);
    // Any script that touches the lock drops the dead reader, its count and its log.
    expect(await scripts.readWrite.readAcquire(keys, 'long', 5_000, 'c', WaiterMode.Single, rid())).toBeNull();
    expect(await redis.zrange(keys.readers, 0, -1)).toEqual(['long']);
    expect(await redis.hkeys(keys.lock)).toEqual(['r:long', 'log:r:long']);
    expect(await scripts.readWrite.readRelease(keys, 'short', 0, fixedRequest('x'), 'publish', 10_000)).toBe(ScriptStatus.NotHeld);
  });

  it('a writer waits for readers; a reader-only owner is refused (UpgradeRefused); the writer may read', async () => {
    const { scripts, keys } = setup();
    await scripts.readWrite.readAcquire(keys, 'reader', 10_000, 'c', WaiterMode.Single, rid());
    const wait = await scripts.readWrite.writeAcquire(keys, 'writer', 10_000, 'c', WaiterMode.Single, rid());
    expect(wait).toBeGreaterThan(9_000);
    expect(await scripts.readWrite.writeAcquire(keys, 'reader', 10_000, 'c', WaiterMode.Single, rid())).toBe(ScriptStatus.UpgradeRefused);
    expect(await scripts.readWrite.readRelease(keys, 'reader', 0, fixedRequest('r1'), 'publish', 10_000)).toBe(0);
    expect(await fx.keys()).toEqual([]);

    expect(await scripts.readWrite.writeAcquire(keys, 'writer', 10_000, 'c', WaiterMode.Single, rid())).toBeNull();
    expect(await scripts.readWrite.readAcquire(keys, 'writer', 10_000, 'c', WaiterMode.Single, rid())).toBeNull();
    const blocked = await scripts.readWrite.readAcquire(keys, 'other', 10_000, 'c', WaiterMode.Single, rid());
    expect(blocked).toBeGreaterThan(9_000);
    expect(await scripts.readWrite.state(keys, 'writer')).toMatchObject({ ownWrites: 1, ownReads: 1, readers: 1 });
    expect(await scripts.readWrite.writeRelease(keys, 'writer', 0, fixedRequest('w1'), 'publish', 10_000)).toBe(0);
    expect(await scripts.readWrite.readAcquire(keys, 'other', 10_000, 'c', WaiterMode.Single, rid())).toBeNull();
    expect(await scripts.readWrite.state(keys, 'other')).toMatchObject({ writeLeftMs: -2, ownReads: 1, readers: 2 });
  });

  it('releases are idempotent per request id, and the log goes with the last hold', async () => {
    const { redis, scripts, keys } = setup();
    for (let i = 0; i < 3; i += 1) await scripts.readWrite.readAcquire(keys, 'o', 10_000, 'c', WaiterMode.Single, rid());
    expect(await scripts.readWrite.readRelease(keys, 'o', 0, fixedRequest('a'), 'publish', 10_000)).toBe(2);
    expect(await scripts.readWrite.readRelease(keys, 'o', 0, fixedRequest('a'), 'publish', 10_000)).toBe(2);
    expect(await scripts.readWrite.readRelease(keys, 'o', 0, fixedRequest('b'), 'publish', 10_000)).toBe(1);
    expect(await scripts.readWrite.readRelease(keys, 'o', 0, fixedRequest('c'), 'publish', 10_000)).toBe(0);
    for (let i = 0; i < 2; i += 1) await scripts.readWrite.writeAcquire(keys, 'w', 10_000, 'c', WaiterMode.Single, rid());
    expect(await scripts.readWrite.writeRelease(keys, 'w', 0, fixedRequest('d'), 'publish', 10_000)).toBe(1);
    expect(await scripts.readWrite.writeRelease(keys, 'w', 0, fixedRequest('d'), 'publish', 10_000)).toBe(1);
    expect((await redis.hkeys(keys.lock)).sort()).toEqual(['log:w:w', 'writer', 'writes', 'wuntil']);
    expect(await scripts.readWrite.writeRelease(keys, 'w', 0, fixedRequest('e'), 'publish', 10_000)).toBe(0);
    expect(await fx.keys()).toEqual([]);
  });

  it('renewal extends only the holds it names, and never revives an ended one', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.readWrite.readAcquire(keys, 'mine', 1_000, 'c', WaiterMode.Single, rid());
    await scripts.readWrite.readAcquire(keys, 'theirs', 1_000, 'c', WaiterMode.Single, rid());
    await scripts.readWrite.readAcquire(keys, 'ended', 100, 'c', WaiterMode.Single, rid());
    await sleep(150);
    const pair = [keys.lock, keys.readers];
    expect(await scripts.renewal.renewMany('readWrite', [...pair, ...pair, ...pair], ['r:mine', 'r:ended', 'w:mine'], 20_000)).toEqual({ results: [1, 2, 2], acks: undefined });
    expect(Number(await redis.zscore(keys.readers, 'theirs'))).toBeLessThan(Number(await redis.zscore(keys.readers, 'mine')) - 15_000);
    expect(await redis.pttl(keys.lock)).toBeGreaterThan(19_000);
    await redis.del(keys.lock, keys.readers);
    expect(await scripts.renewal.renewMany('readWrite', pair, ['r:mine'], 20_000)).toEqual({ results: [0], acks: undefined });
  });

  it('a write release wakes every waiting reader client, or one writer when no reader waits', async () => {
    const { redis, scripts, keys } = setup();
    const sub = fx.redis();
    const woken: string[] = [];
    sub.on('message', (channel: string) => woken.push(channel.slice(`{${fx.prefix}:rw}:`.length)));
    await sub.subscribe(...['r1', 'r2'].map((id) => keys.read.wakePrefix + id), ...['w1', 'w2'].map((id) => keys.write.wakePrefix + id));
    await scripts.readWrite.writeAcquire(keys, 'w', 10_000, 'c', WaiterMode.Single, rid());
    for (const id of ['r1', 'r2']) await scripts.readWrite.readAcquire(keys, `${id}:1`, 10_000, id, WaiterMode.Alone, rid());
    for (const id of ['w1', 'w2']) await scripts.readWrite.writeAcquire(keys, `${id}:1`, 10_000, id, WaiterMode.Alone, rid());
    expect(await scripts.readWrite.writeRelease(keys, 'w', 0, fixedRequest('x'), 'publish', 10_000)).toBe(0);
    await sleep(50);
    expect(woken.sort()).toEqual(['read-wake:r1', 'read-wake:r2']);
    expect(await redis.exists(keys.read.waiters)).toBe(0);

    woken.length = 0;
    await scripts.readWrite.writeAcquire(keys, 'w', 10_000, 'c', WaiterMode.Single, rid());
    expect(await scripts.readWrite.forceUnlock(keys, 'read', 'publish', rid())).toBe(false);
    expect(await scripts.readWrite.forceUnlock(keys, 'write', 'publish', rid())).toBe(true);
    await sleep(50);
    expect(woken).toEqual(['wake:w1']);
    expect(await redis.zrange(keys.write.waiters, 0, -1)).toEqual(['w2']);
  });

  it('fenced acquire: tokens from a counter that outlives the lock; a re-entry keeps the token', async () => {
    const redis = fx.redis();
    const scripts = new LockScripts(redisPortOf(redis, 'redis'), 'spec');
    const keys = fencedLockKeys(fx.prefix, 'f');
    expect(await scripts.lock.fencedAcquire(keys, 'o', 10_000, 'c', WaiterMode.Single, rid())).toEqual({ token: 1 });
    expect(await scripts.lock.fencedAcquire(keys, 'o', 10_000, 'c', WaiterMode.Single, rid())).toEqual({ token: 1 });
    const busy = await scripts.lock.fencedAcquire(keys, 'p', 10_000, 'c', WaiterMode.Single, rid());
    expect('ttlMs' in busy && busy.ttlMs > 9_000).toBe(true);
    await redis.del(keys.lock);
    expect(await scripts.lock.fencedAcquire(keys, 'p', 10_000, 'c', WaiterMode.Single, rid())).toEqual({ token: 2 });
    expect(await redis.get(keys.token)).toBe('2');
    expect(await redis.pttl(keys.token)).toBe(-1);
  });
});
