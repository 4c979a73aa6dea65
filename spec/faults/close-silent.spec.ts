import { describe, expect, it } from 'vitest';
import { LockClient, LockClientClosedError } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// close() is what a process calls on its way out: it must end within a bound even when Redis has
// gone silent (a blackhole, sockets left open), on the connection rlock subscribes on as on the
// application's. A goodbye (QUIT, UNSUBSCRIBE) that gets no answer is given up, and rlock's own
// connection is cut.

/** README: close() resolves within 1 s of being called, whatever Redis does. */
const CLOSE_BOUND_MS = 1_000;
const SLACK_MS = 400;

/** How long `call` took to settle, ms (or Infinity past `limit`). */
const settleTime = async (call: Promise<unknown>, limit: number): Promise<number> => {
  const t0 = performance.now();
  const settled = await Promise.race([call.then(() => true, () => true), sleep(limit).then(() => false)]);
  return settled ? performance.now() - t0 : Infinity;
};

describe('close() while Redis is silent', () => {
  const rig = useFaultRig();

  const holdElsewhere = async (name: string): Promise<void> => {
    const holder = rig.client(rig.lockConnect('direct'));
    await holder.getLock(name).acquire({ leaseTime: 20_000 });
  };

  it("rlock's own pub/sub connection (subscribed, a wait on): close() ends in time and the wait rejects", async () => {
    await holdElsewhere('own');
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    // No subscriber given: rlock makes its own from this connection, through the proxy too.
    const locks = new LockClient(redis, { keyPrefix: rig.prefix });
    locks.on('error', () => undefined);
    const waiting = locks.getLock('own').tryLock(10_000, 5_000);
    waiting.catch(() => undefined);
    await sleep(300); // subscribed, sleeping on the notice
    rig.proxy.blackhole();
    const took = await settleTime(locks.close(), 10_000);
    console.log(`[close-silent] own connection: close() took ${took.toFixed(0)} ms`);
    expect(took).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
    await expect(waiting).rejects.toBeInstanceOf(LockClientClosedError);
  });

  it("rlock's own pub/sub connection, its subscription still unanswered: close() ends in time", async () => {
    await holdElsewhere('own-pending');
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    const locks = new LockClient(redis, { keyPrefix: rig.prefix });
    locks.on('error', () => undefined);
    // The first attempt answers; the subscription that follows goes into the silence.
    const waiting = locks.getLock('own-pending').tryLock(10_000, 5_000);
    waiting.catch(() => undefined);
    await sleep(20);
    rig.proxy.blackhole();
    await sleep(200);
    const took = await settleTime(locks.close(), 10_000);
    console.log(`[close-silent] own connection, subscription pending: close() took ${took.toFixed(0)} ms`);
    expect(took).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
    await expect(waiting).rejects.toBeInstanceOf(LockClientClosedError);
  });

  it("the application's subscriber connection (subscribed, a wait on): close() ends in time", async () => {
    await holdElsewhere('given');
    const redis = rig.lockConnect('proxy');
    const subscriber = rig.lockConnect('proxy');
    await ping(redis);
    await ping(subscriber);
    const locks = new LockClient(redis, { keyPrefix: rig.prefix, subscriber });
    locks.on('error', () => undefined);
    const waiting = locks.getLock('given').tryLock(10_000, 5_000);
    waiting.catch(() => undefined);
    await sleep(300);
    rig.proxy.blackhole();
    const took = await settleTime(locks.close(), 10_000);
    console.log(`[close-silent] given subscriber: close() took ${took.toFixed(0)} ms`);
    expect(took).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
    await expect(waiting).rejects.toBeInstanceOf(LockClientClosedError);
  });
});
