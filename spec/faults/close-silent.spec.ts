import { describe, expect, it } from 'vitest';
import { LockClient, LockClientClosedError, type RedisConnection } from '../../lib/index.js';
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

  /**
   * A client through the proxy waiting on lock `name` (held elsewhere): its pub/sub connection is
   * `subscriber` if given, else rlock's own, made from the proxied connection.
   */
  const waitingClient = async (name: string, subscriber?: RedisConnection): Promise<{ locks: LockClient; waiting: Promise<boolean> }> => {
    await holdElsewhere(name);
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    if (subscriber) await ping(subscriber);
    const locks = new LockClient(redis, { keyPrefix: rig.prefix, ...(subscriber ? { subscriber } : {}) });
    locks.on('error', () => undefined);
    const waiting = locks.getLock(name).tryLock(10_000, 5_000);
    waiting.catch(() => undefined);
    return { locks, waiting };
  };

  /** Closes `locks` once the proxy went silent: within the bound, and the wait rejects. */
  const closeInTime = async (label: string, locks: LockClient, waiting: Promise<boolean>): Promise<void> => {
    const took = await settleTime(locks.close(), 10_000);
    console.log(`[close-silent] ${label}: close() took ${took.toFixed(0)} ms`);
    expect(took).toBeLessThan(CLOSE_BOUND_MS + SLACK_MS);
    await expect(waiting).rejects.toBeInstanceOf(LockClientClosedError);
  };

  it("rlock's own pub/sub connection (subscribed, a wait on): close() ends in time and the wait rejects", async () => {
    const { locks, waiting } = await waitingClient('own');
    await sleep(300); // subscribed, sleeping on the notice
    rig.proxy.blackhole();
    await closeInTime('own connection', locks, waiting);
  });

  it("rlock's own pub/sub connection, its subscription still unanswered: close() ends in time", async () => {
    // The first attempt answers; the subscription that follows goes into the silence.
    const { locks, waiting } = await waitingClient('own-pending');
    await sleep(20);
    rig.proxy.blackhole();
    await sleep(200);
    await closeInTime('own connection, subscription pending', locks, waiting);
  });

  it("the application's subscriber connection (subscribed, a wait on): close() ends in time", async () => {
    const { locks, waiting } = await waitingClient('given', rig.lockConnect('proxy'));
    await sleep(300);
    rig.proxy.blackhole();
    await closeInTime('given subscriber', locks, waiting);
  });
});
