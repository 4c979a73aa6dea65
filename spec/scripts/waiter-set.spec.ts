import { redisPortOf } from '../../lib/redis/detect.js';
import { describe, expect, it } from 'vitest';
import { lockKeys } from '../../lib/keys.js';
import { LockScripts, WaiterMode } from '../../lib/scripts/registry.js';
import { useLockFixture } from '../helpers/fixtures.js';
import { requestIds } from '../helpers/request-ids.js';

// The waiter-set bookkeeping of acquire-2.lua (shared by every acquire script: waiter-set.lua).
describe('waiter set', () => {
  const fx = useLockFixture();
  const rid = requestIds();

  it('a woken client that lost the race goes back to the front, others to the end', async () => {
    const redis = fx.redis();
    const scripts = new LockScripts(redisPortOf(redis, 'redis'), 'spec');
    const keys = lockKeys(fx.prefix, 'k');
    await scripts.lock.acquire(keys, 'holder', 10_000, 'h', WaiterMode.Single, rid());
    await scripts.lock.acquire(keys, 'a:1', 10_000, 'a', WaiterMode.Alone, rid());
    await scripts.lock.acquire(keys, 'b:1', 10_000, 'b', WaiterMode.Alone, rid());
    await scripts.lock.acquire(keys, 'c:1', 10_000, 'c', WaiterMode.Alone, rid());
    expect(await redis.zrange(keys.waiters, 0, -1)).toEqual(['a', 'b', 'c']);
    // A release woke 'a' (taken off the set) and 'b' (also woken, say by a reconnect) ...
    await redis.zrem(keys.waiters, 'a', 'b');
    // ... but a newcomer barged in: 'a' asks again after its wake-up, 'b' after a plain timeout.
    await scripts.lock.acquire(keys, 'b:1', 10_000, 'b', WaiterMode.Alone, rid());
    await scripts.lock.acquire(keys, 'a:1', 10_000, 'a', WaiterMode.AloneWoken, rid());
    await scripts.lock.acquire(keys, 'd:1', 10_000, 'd', WaiterMode.SharedWoken, rid());
    expect(await redis.zrange(keys.waiters, 0, -1)).toEqual(['d', 'a', 'c', 'b']);
    // A woken success leaves the set (Alone) or stays (Shared), like the plain modes.
    await redis.del(keys.lock);
    expect(await scripts.lock.acquire(keys, 'a:1', 10_000, 'a', WaiterMode.AloneWoken, rid())).toBeNull();
    expect(await redis.zrange(keys.waiters, 0, -1)).toEqual(['d', 'c', 'b']);
  });
});
