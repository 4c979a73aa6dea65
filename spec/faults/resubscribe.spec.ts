import type { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { ON_GLIDE, ping } from '../helpers/clients.js';
import { sleep, until } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// After the pub/sub connection comes back, a waiter asks Redis again (a release may have been
// published while it was down). It must ask once the re-subscription is live: a release
// published between its ask and the SUBSCRIBE reaching Redis would otherwise wake nobody, and
// the waiter would sleep until the holder's lease ran out.

const UP_LATENCY_MS = 400;

describe('resubscribe: waiters re-ask only once the re-subscription is live', () => {
  const rig = useFaultRig();

  it('a release published while the re-SUBSCRIBE is on its way still wakes the waiter', async () => {
    const holder = rig.client(rig.lockConnect('direct')).getLock('sub');
    await holder.lock(20_000);

    // A GLIDE subscriber made without subscriptions re-subscribes on its reconciliation schedule
    // (GLIDE's default: 1.7–2.7 s after the reconnect here): set as docs/clients.md advises.
    const subscriber = rig.lockConnect('proxy', { glide: { advancedConfiguration: { pubsubReconciliationIntervalMs: 250 } } });
    await ping(subscriber);
    const waiterClient = rig.client(rig.lockConnect('direct'), { subscriber });
    let gotAt = Infinity;
    const waiting = waiterClient
      .getLock('sub')
      .tryLock(15_000, 30_000)
      .then(
        (got) => {
          gotAt = performance.now();
          return got;
        },
        (error: unknown) => error,
      );
    // The waiter registers (asks again) once its SUBSCRIBE was answered: the subscription is live
    // on both ends, so the reset below drops a confirmed subscription, not one on its way.
    await until(async () => (await rig.admin.zscore(`${rig.key('sub')}:waiters`, waiterClient.id)) !== null);

    // Drop the pub/sub connection; its SUBSCRIBE will reach Redis 400 ms after `ready`.
    rig.proxy.resetAll();
    rig.proxy.latency({ up: UP_LATENCY_MS });
    // ioredis and node-redis say `ready` when the connection is back; GLIDE answers once it is.
    if (ON_GLIDE) await until(() => ping(subscriber).then(() => true, () => false), 5_000);
    else await new Promise<void>((resolve) => (subscriber as unknown as EventEmitter).once('ready', () => resolve()));
    await sleep(100);
    const releasedAt = performance.now();
    await holder.unlock();

    // Bounded: today the waiter would sleep until its 15 s budget ends.
    await until(() => gotAt !== Infinity, 3_000).catch(() => undefined);
    console.log(`[resubscribe] waiter got the lock ${Number.isFinite(gotAt) ? (gotAt - releasedAt).toFixed(1) : 'never (3 s)'} ms after the release`);
    expect(gotAt - releasedAt, 'waiter acquired within 1.5 s of the release').toBeLessThan(1_500);
    expect(await waiting).toBe(true);
  });

  it('a SUBSCRIBE whose connection drops before its answer is sent again: the waiter still waits and is woken', async () => {
    const holder = rig.client(rig.lockConnect('direct')).getLock('lost-sub');
    await holder.lock(20_000);

    const subscriber = rig.lockConnect('proxy');
    await ping(subscriber);
    const waiterClient = rig.client(rig.lockConnect('direct'), { subscriber });
    // The waiter's SUBSCRIBE reaches Redis; its answer is discarded and the socket reset.
    rig.proxy.swallowReplies(1);
    let gotAt = Infinity;
    const waiting = waiterClient
      .getLock('lost-sub')
      .tryLock(10_000, 30_000)
      .then(
        (got) => {
          gotAt = performance.now();
          return got;
        },
        (error: unknown) => error,
      );
    const channel = `${rig.key('lost-sub')}:wake:${waiterClient.id}`;
    await until(async () => (await rig.admin.pubsub('NUMSUB', channel))[1] === 1);
    const releasedAt = performance.now();
    await holder.unlock();

    // Without the second SUBSCRIBE the waiter fails (node-redis fails the lost one) or sleeps out the lease.
    await until(() => gotAt !== Infinity, 3_000).catch(() => undefined);
    const outcome = await Promise.race([waiting, sleep(0).then(() => 'still waiting')]);
    console.log(`[resubscribe] after a lost SUBSCRIBE: ${String(outcome)}, ${Number.isFinite(gotAt) ? (gotAt - releasedAt).toFixed(1) : 'never (3 s)'} ms after the release`);
    expect(outcome).toBe(true);
    expect(gotAt - releasedAt, 'waiter acquired within 1.5 s of the release').toBeLessThan(1_500);
    // The waiter's channel is subscribed once, on the connection that came back.
    expect((await rig.admin.pubsub('NUMSUB', channel))[1]).toBe(1);
  });

  // rlock's own GLIDE subscriber (made with a message callback) is re-subscribed by GLIDE as it
  // reconnects; rlock re-asks once that is live.
  it.runIf(ON_GLIDE)('GLIDE: a release published just after a reconnect wakes a waiter of rlock’s own subscriber within about a second', async () => {
    const holder = rig.client(rig.lockConnect('direct')).getLock('own-sub');
    await holder.lock(20_000);
    // The application's client goes through the proxy; rlock's own subscriber, made from its settings, too.
    const app = rig.lockConnect('proxy');
    await ping(app);
    const waiterClient = new LockClient(app, { keyPrefix: rig.prefix });
    let gotAt = Infinity;
    const waiting = waiterClient
      .getLock('own-sub')
      .tryLock(15_000, 30_000)
      .then((got) => {
        gotAt = performance.now();
        return got;
      });
    const channel = `${rig.key('own-sub')}:wake:${waiterClient.id}`;
    await until(async () => (await rig.admin.pubsub('NUMSUB', channel))[1] === 1);
    await until(async () => (await rig.admin.zscore(`${rig.key('own-sub')}:waiters`, waiterClient.id)) !== null);

    // Both connections drop; their re-SUBSCRIBE and calls reach Redis 400 ms late from then on.
    rig.proxy.resetAll();
    rig.proxy.latency({ up: UP_LATENCY_MS });
    await until(() => ping(app).then(() => true, () => false), 5_000);
    await sleep(100);
    const releasedAt = performance.now();
    await holder.unlock();

    await until(() => gotAt !== Infinity, 4_000).catch(() => undefined);
    console.log(`[resubscribe] GLIDE own subscriber: waiter got the lock ${Number.isFinite(gotAt) ? (gotAt - releasedAt).toFixed(1) : 'never (4 s)'} ms after the release`);
    expect(gotAt - releasedAt, 'waiter acquired within 1.5 s of the release').toBeLessThan(1_500);
    expect(await waiting).toBe(true);
    await waiterClient.close();
  });
});
