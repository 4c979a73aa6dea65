import { describe, expect, it } from 'vitest';
import { latchKeys } from '../../lib/keys.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { directScripts, listenTo } from '../helpers/direct-scripts.js';
import { fixedRequest } from '../helpers/request-ids.js';

// The count-down latch scripts called directly, without the client around them. Their requests
// carry the client id ('<client id>:<call>'): the call log is one record per latch and client.
describe('latch scripts', () => {
  const fx = useLockFixture();
  const setup = () => ({ ...directScripts(fx), keys: latchKeys(fx.prefix, 'l') });

  it('trySet: sets the count of an unset latch only; a resend gets its first answer', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.synchronizers.latchTrySet(keys, 3, fixedRequest('c1:1'))).toBe(true);
    expect(await scripts.synchronizers.latchTrySet(keys, 5, fixedRequest('c2:1'))).toBe(false);
    expect(await redis.hget(keys.latch, 'count')).toBe('3');
    // The resend of c1's call is answered true again, and still does not overwrite the count.
    expect(await scripts.synchronizers.latchTrySet(keys, 3, fixedRequest('c1:1'))).toBe(true);
    expect(await scripts.synchronizers.latchTrySet(keys, 3, fixedRequest('c1:2'))).toBe(false);
    expect(await redis.hget(keys.latch, 'count')).toBe('3');
    // One record per client, each kept a minute.
    const records = await fx.records(redis);
    expect(records.map(({ key }) => key).sort()).toEqual([`${keys.records}l:c1`, `${keys.records}l:c2`]);
    for (const { ttlMs } of records) {
      expect(ttlMs).toBeGreaterThan(55_000);
      expect(ttlMs).toBeLessThanOrEqual(60_000);
    }
  });

  it('countDown: one count per request id; at 0 the latch key goes; never below 0', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.synchronizers.latchTrySet(keys, 3, fixedRequest('c1:1'));
    expect(await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:2'), 'publish')).toBe(2);
    expect(await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:2'), 'publish')).toBe(2);
    expect(await redis.hget(keys.latch, 'count')).toBe('2');
    // Another client's call with the same number is its own call, not a resend.
    expect(await scripts.synchronizers.latchCountDown(keys, fixedRequest('c2:2'), 'publish')).toBe(1);
    expect(await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:3'), 'publish')).toBe(0);
    expect(await redis.exists(keys.latch)).toBe(0);
    expect(await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:4'), 'publish')).toBe(0);
    expect(await redis.exists(keys.latch)).toBe(0);
    expect(await fx.keys(redis)).toEqual([]);
  });

  it('countDown: a resend after the latch opened and was set again changes nothing', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.synchronizers.latchTrySet(keys, 1, fixedRequest('c1:1'));
    expect(await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:2'), 'publish')).toBe(0);
    expect(await scripts.synchronizers.latchTrySet(keys, 2, fixedRequest('c2:1'))).toBe(true);
    expect(await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:2'), 'publish')).toBe(0);
    expect(await scripts.synchronizers.latchTrySet(keys, 9, fixedRequest('c1:1'))).toBe(true);
    expect(await redis.hget(keys.latch, 'count')).toBe('2');
  });

  it('wait: answers the count; registers a waiting client once with a TTL, never an asking one', async () => {
    const { redis, scripts, keys } = setup();
    expect(await scripts.synchronizers.latchWait(keys, 'w1', 5_000)).toBe(0);
    expect(await redis.exists(keys.waiters)).toBe(0);
    await scripts.synchronizers.latchTrySet(keys, 2, fixedRequest('c1:1'));
    expect(await scripts.synchronizers.latchWait(keys, '', 5_000)).toBe(2);
    expect(await redis.exists(keys.waiters)).toBe(0);
    expect(await scripts.synchronizers.latchWait(keys, 'w1', 5_000)).toBe(2);
    const since = await redis.zscore(keys.waiters, 'w1');
    await sleep(5);
    expect(await scripts.synchronizers.latchWait(keys, 'w1', 5_000)).toBe(2);
    expect(await redis.zscore(keys.waiters, 'w1')).toBe(since);
    const pttl = await redis.pttl(keys.waiters);
    expect(pttl).toBeGreaterThan(5_000);
    expect(pttl).toBeLessThanOrEqual(6_000);
    await scripts.synchronizers.latchLeave(keys, 'w1');
    expect(await redis.exists(keys.waiters)).toBe(0);
  });

  it('countDown to 0 wakes every waiting client once and empties the waiter set', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.synchronizers.latchTrySet(keys, 2, fixedRequest('c1:1'));
    for (const client of ['w1', 'w2']) await scripts.synchronizers.latchWait(keys, client, 5_000);
    const heard = await listenTo(fx, [`${keys.wakePrefix}w1`, `${keys.wakePrefix}w2`]);
    await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:2'), 'publish');
    await sleep(30);
    expect(heard).toEqual([]);
    await scripts.synchronizers.latchCountDown(keys, fixedRequest('c1:3'), 'publish');
    await until(() => heard.length >= 2);
    await sleep(30);
    expect(heard.map(([channel]) => channel).sort()).toEqual([`${keys.wakePrefix}w1`, `${keys.wakePrefix}w2`]);
    expect(await fx.keys(redis)).toEqual([]);
    expect(await scripts.synchronizers.latchWait(keys, 'w1', 5_000)).toBe(0);
  });
});
