import { hasSubscribers } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { LockClientClosedError, type LockClient } from '../../lib/index.js';
import { lockAttributes as A, lockMetrics as M } from '../../lib/otel/index.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { sleep, until } from '../helpers/fixtures.js';
import { histogramOf, useOtel, valueOf } from './otel-harness.js';

const LOCK = { [A.kind]: 'lock' };

describe('rlock/otel metrics', () => {
  const rig = useFaultRig();
  const otel = useOtel();
  const client = (options = {}): LockClient => rig.client(rig.lockConnect('direct'), options);

  it('each instrument after acquire, re-enter, contend, time out, abort, fail, lose a deleted key, and a semaphore', async () => {
    otel.instrument();
    const a = client({ watchdogTimeout: 600 });
    const b = client();
    const lost: string[] = [];
    a.on('lost', (info) => lost.push(info.reason));

    // Acquire and re-enter: one hold, two acquisitions.
    const lock = a.getLock('orders:1');
    await a.runInContext(async () => {
      await lock.lock();
      await lock.lock();
      expect(valueOf(await otel.points(M.holdsActive), LOCK)).toBe(1);
      await lock.unlock();
      await lock.unlock();
    });
    expect(valueOf(await otel.points(M.holdsActive), LOCK)).toBe(0);
    expect(valueOf(await otel.points(M.acquireDuration), { ...LOCK, [A.acquireOutcome]: 'acquired' })).toBe(2);

    // Contend: b waits (a waiter, while a holds), then acquires when a releases.
    const held = await lock.acquire();
    const waiting = b.getLock('orders:1').acquire({ waitTime: 5_000 });
    await sleep(150);
    expect(valueOf(await otel.points(M.waitersActive), LOCK)).toBe(1);
    expect(valueOf(await otel.points(M.holdsActive), LOCK)).toBe(1);
    await held.release();
    const second = await waiting;
    expect(valueOf(await otel.points(M.waitersActive), LOCK)).toBe(0);
    const acquired = histogramOf(await otel.points(M.acquireDuration), { ...LOCK, [A.acquireOutcome]: 'acquired' })!;
    expect(acquired.count).toBe(4);
    expect(acquired.max).toBeGreaterThanOrEqual(0.14);

    // Time out, abort, and fail (the client closes while waiting), all while b holds.
    expect(await a.getLock('orders:1').tryLock(60)).toBe(false);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60);
    await expect(a.getLock('orders:1').acquire({ signal: controller.signal })).rejects.toThrow();
    const closing = client();
    const failing = closing.getLock('orders:1').acquire().catch((error: unknown) => error);
    // Well into its wait (subscribed, asleep) before the client closes.
    await sleep(300);
    await closing.close();
    expect(await failing).toBeInstanceOf(LockClientClosedError);
    await second.release();

    const durations = await otel.points(M.acquireDuration);
    expect(valueOf(durations, { ...LOCK, [A.acquireOutcome]: 'timeout' })).toBe(1);
    expect(histogramOf(durations, { ...LOCK, [A.acquireOutcome]: 'timeout' })!.min).toBeGreaterThanOrEqual(0.055);
    expect(valueOf(durations, { ...LOCK, [A.acquireOutcome]: 'aborted' })).toBe(1);
    expect(valueOf(durations, { ...LOCK, [A.acquireOutcome]: 'error', [A.errorType]: 'LockClientClosedError' })).toBe(1);
    expect(valueOf(await otel.points(M.waitersActive), LOCK)).toBe(0);

    // Lose a hold: its key deleted behind the watchdog's back.
    const doomed = await a.getFairLock('jobs:7').acquire();
    expect(valueOf(await otel.points(M.holdsActive), { [A.kind]: 'fair-lock' })).toBe(1);
    await rig.admin.del(rig.key('jobs:7'));
    await until(() => doomed.signal.aborted, 3_000);
    expect(lost).toEqual(['deleted']);
    expect(valueOf(await otel.points(M.lost), { [A.lostReason]: 'deleted' })).toBe(1);
    expect(valueOf(await otel.points(M.holdsActive), { [A.kind]: 'fair-lock' })).toBe(0);
    const holdDurations = await otel.points(M.holdDuration);
    expect(valueOf(holdDurations, { [A.kind]: 'fair-lock', [A.holdOutcome]: 'deleted' })).toBe(1);
    // Three holds of orders:1 released (the re-entered one, a's, b's).
    expect(valueOf(holdDurations, { ...LOCK, [A.holdOutcome]: 'released' })).toBe(3);
    expect(histogramOf(holdDurations, { ...LOCK, [A.holdOutcome]: 'released' })!.max).toBeGreaterThanOrEqual(0.14);

    // A semaphore: holds count permits.
    const SEM = { [A.kind]: 'semaphore' };
    const pool = a.getSemaphore('pool', { permits: 3 });
    const two = await pool.acquire({ permits: 2 });
    const one = await pool.acquire();
    expect(valueOf(await otel.points(M.holdsActive), SEM)).toBe(3);
    expect(await b.getSemaphore('pool', { permits: 3 }).tryAcquire({ waitTime: 50 })).toBeNull();
    await two.release();
    expect(valueOf(await otel.points(M.holdsActive), SEM)).toBe(1);
    await one.release();
    expect(valueOf(await otel.points(M.holdsActive), SEM)).toBe(0);
    const semDurations = await otel.points(M.acquireDuration);
    expect(valueOf(semDurations, { ...SEM, [A.acquireOutcome]: 'acquired' })).toBe(2);
    expect(valueOf(semDurations, { ...SEM, [A.acquireOutcome]: 'timeout' })).toBe(1);
    expect(valueOf(await otel.points(M.holdDuration), { ...SEM, [A.holdOutcome]: 'released' })).toBe(2);

    // No attribute carries a lock's name unless the option maps it.
    for (const attributes of await otel.allAttributes()) {
      expect(Object.keys(attributes)).not.toContain(A.name);
      expect(Object.values(attributes).join(' ')).not.toMatch(/orders|jobs|pool/);
    }
  });

  it('renewal failures count the holds whose renewal call failed', async () => {
    otel.instrument();
    const admin = rig.connect('direct');
    const a = client({ watchdogTimeout: 600 });
    const lease = await a.getLock('renewed').acquire();
    const permit = await a.getSemaphore('renewed-pool', { permits: 2 }).acquire();
    try {
      // Over maxmemory, commands that may grow memory fail (OOM): the permits' renewal (ZADD)
      // fails and is retried; the lock's (PEXPIRE) does not grow memory and goes on.
      await admin.config('SET', 'maxmemory', '1');
      await until(async () => valueOf(await otel.points(M.renewalFailures), { [A.kind]: 'semaphore' }) >= 2, 3_000);
      const failures = await otel.points(M.renewalFailures);
      expect(failures.map((p) => p.attributes)).toEqual([{ [A.kind]: 'semaphore', [A.errorType]: 'LockRedisError' }]);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    expect(lease.signal.aborted).toBe(false);
    expect(permit.signal.aborted).toBe(false);
    expect(valueOf(await otel.points(M.lost), {})).toBe(0);
  });

  it('names a lock only as the lockName option maps it', async () => {
    otel.instrument({ lockName: (name) => (name.startsWith('orders:') ? 'orders' : undefined) });
    const a = client();
    await (await a.getLock('orders:42').acquire()).release();
    await (await a.getLock('misc').acquire()).release();
    const durations = await otel.points(M.acquireDuration);
    expect(valueOf(durations, { ...LOCK, [A.name]: 'orders' })).toBe(1);
    expect(durations.filter((p) => p.attributes[A.name] === undefined)).toHaveLength(1);
    expect((await otel.allAttributes()).some((attributes) => Object.values(attributes).includes('orders:42'))).toBe(false);
  });

  it('subscribes nothing until instrumented and after disable(); a subscription that starts mid-hold keeps the gauges at zero', async () => {
    const channels = ['tracing:rlock:acquire:start', 'tracing:rlock:release:start', 'rlock:hold:start', 'rlock:hold:end', 'rlock:lost', 'rlock:renew:failure'];
    expect(channels.filter((name) => hasSubscribers(name))).toEqual([]);
    const a = client();
    const early = await a.getLock('early').acquire();
    const instrumentation = otel.instrument();
    expect(channels.filter((name) => hasSubscribers(name))).toEqual(channels);
    await early.release();
    expect(valueOf(await otel.points(M.holdsActive), LOCK)).toBe(0);
    expect(await otel.points(M.holdDuration)).toEqual([]);
    instrumentation.disable();
    instrumentation.disable();
    expect(channels.filter((name) => hasSubscribers(name))).toEqual([]);
  });
});
