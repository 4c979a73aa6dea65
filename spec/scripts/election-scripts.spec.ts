import { describe, expect, it } from 'vitest';
import { electionKeys } from '../../lib/keys.js';
import { ScriptStatus, WaiterMode } from '../../lib/scripts/registry.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { directScripts, listenTo } from '../helpers/direct-scripts.js';
import { fixedRequest, requestIds } from '../helpers/request-ids.js';

// The election scripts called directly, without the client around them.
describe('election scripts', () => {
  const fx = useLockFixture();
  const rid = requestIds();
  const setup = () => ({ ...directScripts(fx), keys: electionKeys(fx.prefix, 'e') });

  it('campaign: the first owner leads with epoch 1 and its value; a second owner gets the leader PTTL', async () => {
    const { redis, scripts, keys } = setup();
    const heard = await listenTo(fx, [keys.changes]);
    expect(await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, rid(), 'va', 'publish')).toEqual({ epoch: 1 });
    expect(await redis.hmget(keys.election, 'a:1', 'epoch', 'value', 'rev')).toEqual(['1', '1', 'va', '0']);
    const pttl = await redis.pttl(keys.election);
    expect(pttl).toBeGreaterThan(9_000);
    expect(pttl).toBeLessThanOrEqual(10_000);
    // The epoch counter never expires: epochs only grow.
    expect(await redis.get(keys.epoch)).toBe('1');
    expect(await redis.pttl(keys.epoch)).toBe(-1);
    const refused = await scripts.election.campaign(keys, 'b:1', 10_000, 'b', WaiterMode.Single, rid(), 'vb', 'publish');
    expect(refused).toHaveProperty('ttlMs');
    expect((refused as { ttlMs: number }).ttlMs).toBeGreaterThan(9_000);
    expect((refused as { ttlMs: number }).ttlMs).toBeLessThanOrEqual(10_000);
    expect(await redis.hexists(keys.election, 'b:1')).toBe(0);
    // A single attempt registers no waiter.
    expect(await redis.exists(keys.wait.waiters)).toBe(0);
    await until(() => heard.length > 0);
    await sleep(30);
    expect(heard).toEqual([[keys.changes, 'L:1:0:va']]);
  });

  it('campaign: a resent attempt is answered with its epoch and changes nothing', async () => {
    const { redis, scripts, keys } = setup();
    const heard = await listenTo(fx, [keys.changes]);
    const request = fixedRequest('camp-1');
    expect(await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, request, 'va', 'publish')).toEqual({ epoch: 1 });
    expect(await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, request, 'va', 'publish')).toEqual({ epoch: 1 });
    expect(await redis.hget(keys.election, 'a:1')).toBe('1');
    expect(await redis.get(keys.epoch)).toBe('1');
    await sleep(50);
    expect(heard).toHaveLength(1);
  });

  it('state: the last epoch and the leader, or no leader; epochs keep growing across leaders', async () => {
    const { scripts, keys } = setup();
    expect(await scripts.election.state(keys)).toEqual({ lastEpoch: 0, leader: null });
    await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, rid(), 'va', 'publish');
    const led = await scripts.election.state(keys);
    expect(led.lastEpoch).toBe(1);
    expect(led.leader).toMatchObject({ epoch: 1, rev: 0, value: 'va' });
    expect(led.leader!.ttlMs).toBeGreaterThan(9_000);
    expect(await scripts.election.resign(keys, 'a:1', 0, rid(), 'publish', 10_000)).toBe(0);
    expect(await scripts.election.state(keys)).toEqual({ lastEpoch: 1, leader: null });
    expect(await scripts.election.campaign(keys, 'b:1', 10_000, 'b', WaiterMode.Single, rid(), 'vb', 'publish')).toEqual({ epoch: 2 });
    expect((await scripts.election.state(keys)).leader).toMatchObject({ epoch: 2, rev: 0, value: 'vb' });
  });

  it('proclaim: the leader publishes a new value once per request id; others are NotHeld', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, rid(), 'v0', 'publish');
    const heard = await listenTo(fx, [keys.changes]);
    expect(await scripts.election.proclaim(keys, 'a:1', fixedRequest('p1'), 'v1', 'publish')).toBe(1);
    expect(await scripts.election.proclaim(keys, 'a:1', fixedRequest('p1'), 'v1', 'publish')).toBe(1);
    expect(await scripts.election.proclaim(keys, 'a:1', fixedRequest('p2'), 'v2', 'publish')).toBe(2);
    expect(await scripts.election.proclaim(keys, 'b:1', rid(), 'bad', 'publish')).toBe(ScriptStatus.NotHeld);
    expect(await redis.hmget(keys.election, 'value', 'rev', 'epoch')).toEqual(['v2', '2', '1']);
    await until(() => heard.length >= 2);
    await sleep(30);
    expect(heard.map(([, message]) => message)).toEqual(['L:1:1:v1', 'L:1:2:v2']);
  });

  it('resign: frees the election once, announces the vacancy and wakes one waiting campaigner', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, rid(), 'va', 'publish');
    for (const client of ['b', 'c']) {
      expect(await scripts.election.campaign(keys, `${client}:1`, 10_000, client, WaiterMode.Alone, rid(), client, 'publish')).toHaveProperty('ttlMs');
    }
    expect(await redis.zrange(keys.wait.waiters, 0, -1)).toEqual(['b', 'c']);
    const heard = await listenTo(fx, [keys.changes, `${keys.wait.wakePrefix}b`, `${keys.wait.wakePrefix}c`]);
    expect(await scripts.election.resign(keys, 'b:1', 0, rid(), 'publish', 10_000)).toBe(ScriptStatus.NotHeld);
    const request = fixedRequest('resign-1');
    expect(await scripts.election.resign(keys, 'a:1', 0, request, 'publish', 10_000)).toBe(0);
    expect(await redis.exists(keys.election)).toBe(0);
    // A resend is answered from the record and announces nothing more.
    expect(await scripts.election.resign(keys, 'a:1', 0, request, 'publish', 10_000)).toBe(0);
    expect(await scripts.election.resign(keys, 'a:1', 0, rid(), 'publish', 10_000)).toBe(ScriptStatus.NotHeld);
    await until(() => heard.length >= 2);
    await sleep(50);
    expect(heard.map(([channel]) => channel).sort()).toEqual([keys.changes, `${keys.wait.wakePrefix}b`].sort());
    expect(heard.find(([channel]) => channel === keys.changes)![1]).toBe('V:1');
    const records = await fx.records(redis);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expect(record.ttlMs).toBeGreaterThan(0);
  });

  it('resign: a re-entered leader keeps leading until its last hold goes', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, rid(), 'va', 'publish');
    expect(await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, rid(), 'va', 'publish')).toEqual({ epoch: 1 });
    expect(await redis.get(keys.epoch)).toBe('1');
    expect(await scripts.election.resign(keys, 'a:1', 0, rid(), 'publish', 10_000)).toBe(1);
    expect(await redis.hget(keys.election, 'epoch')).toBe('1');
    expect(await scripts.election.resign(keys, 'a:1', 0, rid(), 'publish', 10_000)).toBe(0);
    // Only the epoch counter is left, by design.
    expect(await fx.keys(redis)).toEqual([keys.epoch]);
  });

  it('keepHold: shortens the leader hold to at most keepMs, never lengthens it; false for a non-holder', async () => {
    const { redis, scripts, keys } = setup();
    await scripts.election.campaign(keys, 'a:1', 10_000, 'a', WaiterMode.Single, rid(), 'va', 'publish');
    expect(await scripts.election.keepHold(keys.election, keys.name, 'a:1', 2_000)).toBe(true);
    const kept = await redis.pttl(keys.election);
    expect(kept).toBeGreaterThan(1_500);
    expect(kept).toBeLessThanOrEqual(2_000);
    expect(await scripts.election.keepHold(keys.election, keys.name, 'a:1', 8_000)).toBe(true);
    expect(await redis.pttl(keys.election)).toBeLessThanOrEqual(2_000);
    expect(await scripts.election.keepHold(keys.election, keys.name, 'b:1', 100)).toBe(false);
    expect(await redis.pttl(keys.election)).toBeGreaterThan(1_000);
  });
});
