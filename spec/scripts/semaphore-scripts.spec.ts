import { describe, expect, it } from 'vitest';
import { semaphoreKeys } from '../../lib/keys.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { directScripts, listenTo } from '../helpers/direct-scripts.js';

// The semaphore scripts called directly, without the client around them.
describe('semaphore scripts', () => {
  const fx = useLockFixture();
  const setup = () => ({ ...directScripts(fx), keys: semaphoreKeys(fx.prefix, 's') });
  const single = { mode: '0', hint: '1,1', othersHint: '', promised: 0 };
  const alone = { mode: '2', hint: '1,1', othersHint: '', promised: 0 };

  it('acquire: grants up to the limit, then answers ms until the earliest lease ends', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.synchronizers.acquire(keys, '1:a', 2, 5_000, 'c1', single, 'publish')).toBeNull();
    expect(await scripts.synchronizers.acquire(keys, '1:b', 2, 10_000, 'c1', single, 'publish')).toBeNull();
    const wait = await scripts.synchronizers.acquire(keys, '1:c', 2, 10_000, 'c2', single, 'publish');
    expect(wait).toBeGreaterThan(4_000);
    expect(wait).toBeLessThanOrEqual(5_000);
    expect(await redis.zscore(keys.permits, '1:c')).toBeNull();
    expect(await redis.zscore(keys.permits, '#')).toBe('2');
    expect(await scripts.synchronizers.available(keys, 2)).toBe(0);
    // A larger object limit sees the free room; a multi-permit request needs all of it.
    expect(await scripts.synchronizers.available(keys, 3)).toBe(1);
    expect(await scripts.synchronizers.acquire(keys, '2:d', 3, 10_000, 'c2', single, 'publish')).not.toBeNull();
    expect(await scripts.synchronizers.acquire(keys, '1:d', 3, 10_000, 'c2', single, 'publish')).toBeNull();
    expect(await redis.zscore(keys.permits, '#')).toBe('3');
    // The set lives as long as its longest lease (plus the slack), no longer.
    const pttl = await redis.pttl(keys.permits);
    expect(pttl).toBeGreaterThan(9_000);
    expect(pttl).toBeLessThanOrEqual(11_000);
    // A single attempt registers no waiter.
    expect(await redis.exists(keys.waiters, keys.needs, keys.queue)).toBe(0);
  });

  it('acquire: a resent grant (its member already out) is granted again and counted once', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.synchronizers.acquire(keys, '1:a', 1, 10_000, 'c1', single, 'publish')).toBeNull();
    expect(await scripts.synchronizers.acquire(keys, '1:a', 1, 10_000, 'c1', single, 'publish')).toBeNull();
    expect(await redis.zscore(keys.permits, '#')).toBe('1');
    expect(await scripts.synchronizers.acquire(keys, '1:b', 1, 10_000, 'c2', single, 'publish')).not.toBeNull();
  });

  it('release: 1 once, 0 after; the last release deletes the permit set', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.synchronizers.acquire(keys, '1:a', 2, 10_000, 'c1', single, 'publish');
    await scripts.synchronizers.acquire(keys, '1:b', 2, 10_000, 'c1', single, 'publish');
    expect(await scripts.synchronizers.release(keys, '1:a', 2, 'publish')).toBe(1);
    expect(await scripts.synchronizers.release(keys, '1:a', 2, 'publish')).toBe(0);
    expect(await scripts.synchronizers.available(keys, 2)).toBe(1);
    expect(await redis.zscore(keys.permits, '#')).toBe('1');
    expect(await scripts.synchronizers.release(keys, '1:b', 2, 'publish')).toBe(1);
    expect(await fx.keys(redis)).toEqual([]);
  });

  it('available and acquire: an ended lease gives its permits back without a release', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.synchronizers.acquire(keys, '2:dead', 2, 100, 'c1', single, 'publish');
    expect(await scripts.synchronizers.available(keys, 2)).toBe(0);
    await sleep(150);
    expect(await scripts.synchronizers.available(keys, 2)).toBe(2);
    expect(await scripts.synchronizers.acquire(keys, '2:live', 2, 10_000, 'c2', single, 'publish')).toBeNull();
    expect(await redis.zscore(keys.permits, '2:dead')).toBeNull();
    expect(await redis.zscore(keys.permits, '#')).toBe('2');
  });

  it('a waiting acquire registers its client; a release wakes it; passWake lets it leave', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.synchronizers.acquire(keys, '1:h', 1, 10_000, 'h', single, 'publish');
    expect(await scripts.synchronizers.acquire(keys, '1:w', 1, 10_000, 'w', alone, 'publish')).not.toBeNull();
    expect(await redis.zscore(keys.waiters, 'w')).not.toBeNull();
    expect(await redis.pttl(keys.waiters)).toBeGreaterThan(0);
    const heard = await listenTo(fx, [`${keys.wakePrefix}w`]);
    expect(await scripts.synchronizers.release(keys, '1:h', 1, 'publish')).toBe(1);
    await until(() => heard.length > 0);
    // The woken client does not take the permit: it hands it back and leaves.
    await scripts.synchronizers.passWake(keys, 'w', 1, 'publish', 'all', true);
    expect(await redis.zscore(keys.waiters, 'w')).toBeNull();
    expect(await scripts.synchronizers.available(keys, 1)).toBe(1);
    expect(await scripts.synchronizers.acquire(keys, '1:x', 1, 10_000, 'x', single, 'publish')).toBeNull();
    await scripts.synchronizers.release(keys, '1:x', 1, 'publish');
    expect(await fx.keys(redis)).toEqual([]);
  });

  it('fair acquire: only the head of the queue takes permits; a single attempt never overtakes', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.synchronizers.fairAcquire(keys, '1:h', 1, 10_000, '', 5_000, 'publish')).toBeNull();
    expect(await scripts.synchronizers.fairAcquire(keys, '1:a', 1, 10_000, 'a|1|1', 5_000, 'publish', true)).not.toBeNull();
    expect(await scripts.synchronizers.fairAcquire(keys, '1:b', 1, 10_000, 'b|1|1', 5_000, 'publish', true)).not.toBeNull();
    expect(await redis.zrange(keys.queue, 0, -1)).toEqual(['a|1|1', 'b|1|1']);
    expect(await redis.pttl(keys.timeouts)).toBeGreaterThan(4_000);
    const heard = await listenTo(fx, [`${keys.turnPrefix}a`, `${keys.turnPrefix}b`]);
    expect(await scripts.synchronizers.release(keys, '1:h', 1, 'publish')).toBe(1);
    await until(() => heard.length > 0);
    expect(heard[0]![0]).toBe(`${keys.turnPrefix}a`);
    // Free, but b and a single attempt are behind a.
    expect(await scripts.synchronizers.fairAcquire(keys, '1:b', 1, 10_000, 'b|1|1', 5_000, 'publish')).not.toBeNull();
    expect(await scripts.synchronizers.fairAcquire(keys, '1:s', 1, 10_000, '', 5_000, 'publish')).toBe(0);
    expect(await scripts.synchronizers.fairAcquire(keys, '1:a', 1, 10_000, 'a|1|1', 5_000, 'publish')).toBeNull();
    expect(await redis.zrange(keys.queue, 0, -1)).toEqual(['b|1|1']);
    expect(await redis.zscore(keys.permits, '1:a')).not.toBeNull();
  });

  it('fair leave: a waiter leaves the queue at once; when the queue empties its keys go', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.synchronizers.fairAcquire(keys, '1:h', 1, 10_000, '', 5_000, 'publish');
    await scripts.synchronizers.fairAcquire(keys, '1:a', 1, 10_000, 'a|1|1', 5_000, 'publish', true);
    await scripts.synchronizers.fairAcquire(keys, '1:b', 1, 10_000, 'b|1|1', 5_000, 'publish', true);
    await scripts.synchronizers.fairLeave(keys, 'a|1|1', 1, 'publish');
    await scripts.synchronizers.fairLeave(keys, 'a|1|1', 1, 'publish');
    expect(await redis.zrange(keys.queue, 0, -1)).toEqual(['b|1|1']);
    expect(await redis.zrange(keys.timeouts, 0, -1)).toEqual(['b|1|1']);
    await scripts.synchronizers.release(keys, '1:h', 1, 'publish');
    // b is the head now: granted.
    expect(await scripts.synchronizers.fairAcquire(keys, '1:b', 1, 10_000, 'b|1|1', 5_000, 'publish')).toBeNull();
    expect(await redis.exists(keys.queue, keys.timeouts)).toBe(0);
    await scripts.synchronizers.release(keys, '1:b', 1, 'publish');
    expect(await fx.keys(redis)).toEqual([]);
  });
});
