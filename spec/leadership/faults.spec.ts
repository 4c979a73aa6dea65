import type { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LockLostError, type LeaderInfo, type LockClient } from '../../lib/index.js';
import { ON_GLIDE, ping } from '../helpers/clients.js';
import { sleep, until } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';

const WATCHDOG_MS = 1_500;

/** Collects what an observe() loop yields, until the returned controller aborts. */
function collect(client: LockClient, name: string): { seen: (LeaderInfo | null)[]; stop: AbortController } {
  const seen: (LeaderInfo | null)[] = [];
  const stop = new AbortController();
  void (async () => {
    for await (const leader of client.getElection(name).observe({ signal: stop.signal })) seen.push(leader);
  })().catch(() => undefined);
  return { seen, stop };
}

describe('leadership under faults', () => {
  const rig = useFaultRig();

  const proxied = async (options: { watchdogTimeout?: number } = {}): Promise<LockClient> => {
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    return rig.client(redis, options);
  };

  it('a leader whose connection goes silent is told (signal, `lost`) before a rival’s campaign resolves', async () => {
    const leader = await proxied({ watchdogTimeout: WATCHDOG_MS });
    let lostAt = Infinity;
    leader.on('lost', (info) => {
      if (info.name === 'e' && lostAt === Infinity) lostAt = performance.now();
    });
    const leadership = await leader.getElection('e').campaign({ value: 'silent' });
    let abortedAt = Infinity;
    leadership.signal.addEventListener('abort', () => (abortedAt = performance.now()));
    await sleep(700); // renewed at least once: the silence starts mid-lease
    const silentAt = performance.now();
    rig.proxy.blackhole();
    const rival = await rig.client(rig.lockConnect('direct')).getElection('e').campaign({ value: 'rival', waitTime: 10_000 });
    const rivalAt = performance.now();
    console.log(`[leadership faults] leader told ${(abortedAt - silentAt).toFixed(0)} ms after the silence, ${(rivalAt - abortedAt).toFixed(0)} ms before the rival led`);
    expect(abortedAt, 'signal aborted before the rival led').toBeLessThan(rivalAt);
    expect(lostAt, '`lost` before the rival led').toBeLessThan(rivalAt);
    expect(leadership.signal.reason).toBeInstanceOf(LockLostError);
    expect(rival.epoch).toBeGreaterThan(leadership.epoch);
    rig.proxy.heal();
    await rival.resign();
  });

  it('a campaign whose reply is lost is applied once: one epoch, one announcement', async () => {
    const observer = rig.client(rig.lockConnect('direct'));
    const { seen, stop } = collect(observer, 'e');
    await until(() => seen.length === 1);
    const client = await proxied();
    rig.proxy.swallowReplies(1);
    const leadership = await client.getElection('e').campaign({ value: 'once' });
    expect(leadership.epoch).toBe(1);
    expect(await rig.admin.get(`${rig.key('e')}:election:epoch`)).toBe('1');
    await leadership.resign();
    await until(() => seen.length === 3);
    await sleep(100);
    expect(seen).toEqual([null, { value: 'once', epoch: 1 }, null]);
    stop.abort();
  });

  it('a proclaim whose reply is lost is applied once: one change seen', async () => {
    const observer = rig.client(rig.lockConnect('direct'));
    const { seen, stop } = collect(observer, 'e');
    await until(() => seen.length === 1);
    const client = await proxied();
    const leadership = await client.getElection('e').campaign({ value: 'v1' });
    rig.proxy.swallowReplies(1);
    await leadership.proclaim('v2');
    expect(await rig.admin.hget(`${rig.key('e')}:election`, 'rev')).toBe('1');
    await leadership.proclaim('v3');
    await until(() => seen.length === 4);
    await sleep(100);
    const epoch = leadership.epoch;
    expect(seen).toEqual([null, { value: 'v1', epoch }, { value: 'v2', epoch }, { value: 'v3', epoch }]);
    stop.abort();
    await leadership.resign();
  });

  it('a resign whose reply is lost is applied once: one vacancy, and the next leader is not stepped down', async () => {
    const client = await proxied();
    const leadership = await client.getElection('e').campaign();
    const rival = rig.client(rig.lockConnect('direct')).getElection('e');
    const waiting = rival.campaign({ value: 'next', waitTime: 10_000 });
    rig.proxy.swallowReplies(1);
    await leadership.resign();
    const next = await waiting;
    await sleep(200);
    expect(await rival.leader()).toEqual({ value: 'next', epoch: next.epoch });
    await next.resign();
  });

  it('an observer whose pub/sub connection dropped reads the election again when it is back: missed changes are caught up', async () => {
    const subscriber = rig.lockConnect('proxy');
    await ping(subscriber);
    const observer = rig.client(rig.lockConnect('direct'), { subscriber });
    const { seen, stop } = collect(observer, 'e');
    await until(() => seen.length === 1);
    expect(seen).toEqual([null]);
    rig.proxy.blackhole({ drop: true });
    // Announced while the observer cannot hear it.
    const leadership = await rig.client(rig.lockConnect('direct')).getElection('e').campaign({ value: 'missed' });
    await sleep(100);
    expect(seen).toEqual([null]);
    rig.proxy.heal();
    rig.proxy.resetAll();
    // GLIDE tells nothing of its reconnects: it answers once it is back.
    if (ON_GLIDE) await until(() => ping(subscriber).then(() => true, () => false), 5_000);
    else await new Promise<void>((resolve) => (subscriber as unknown as EventEmitter).once('ready', () => resolve()));
    await until(() => seen.length === 2, 5_000);
    expect(seen).toEqual([null, { value: 'missed', epoch: leadership.epoch }]);
    stop.abort();
    await leadership.resign();
  });
});
