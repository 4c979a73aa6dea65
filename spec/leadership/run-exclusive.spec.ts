import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../lib/index.js';
import { CommandRecorder } from '../helpers/command-stats.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('runExclusive', () => {
  const fx = useLockFixture();

  it('runs fn with the lock held for atMostFor, releases after it, and returns its value', async () => {
    const locks = fx.client();
    const redis = fx.redis();
    const result = await locks.runExclusive(
      'job',
      async (lease) => {
        expect(lease.name).toBe('job');
        const ttl = await redis.pttl(`{${fx.prefix}:job}`);
        expect(ttl).toBeGreaterThan(4_000);
        expect(ttl).toBeLessThanOrEqual(5_000);
        return 42;
      },
      { atMostFor: 5_000 },
    );
    expect(result).toEqual({ ran: true, value: 42 });
    expect(await fx.keys()).toEqual([]);
  });

  it('skips (ran: false) while another run holds the lock, without waiting', async () => {
    const a = fx.client();
    const b = fx.client();
    let skipped: unknown;
    await a.runExclusive(
      'job',
      async () => {
        const started = performance.now();
        skipped = await b.runExclusive('job', () => 'never', { atMostFor: 5_000 });
        expect(performance.now() - started).toBeLessThan(500);
      },
      { atMostFor: 5_000 },
    );
    expect(skipped).toEqual({ ran: false });
  });

  it('shares the lock of the name with getLock(name)', async () => {
    const locks = fx.client();
    const lease = await locks.getLock('job').acquire();
    expect(await locks.runExclusive('job', () => 1, { atMostFor: 1_000 })).toEqual({ ran: false });
    await lease.release();
    expect(await locks.runExclusive('job', () => 1, { atMostFor: 1_000 })).toEqual({ ran: true, value: 1 });
  });

  it('keeps the lock until atLeastFor after the start when fn was faster, then it frees by itself', async () => {
    const locks = fx.client();
    const redis = fx.redis();
    const started = performance.now();
    expect(await locks.runExclusive('job', () => 'fast', { atMostFor: 10_000, atLeastFor: 800 })).toEqual({ ran: true, value: 'fast' });
    const ttl = await redis.pttl(`{${fx.prefix}:job}`);
    expect(ttl).toBeGreaterThan(500);
    expect(ttl).toBeLessThanOrEqual(800);
    // A replica whose timer fires a little later skips the run.
    expect(await fx.client().runExclusive('job', () => 'again', { atMostFor: 10_000 })).toEqual({ ran: false });
    await sleep(Math.max(0, 850 - (performance.now() - started)));
    expect(await fx.client().runExclusive('job', () => 'later', { atMostFor: 10_000 })).toEqual({ ran: true, value: 'later' });
  });

  it('a run longer than atLeastFor releases at once when fn settles', async () => {
    const locks = fx.client();
    await locks.runExclusive('job', () => sleep(300), { atMostFor: 5_000, atLeastFor: 100 });
    expect(await fx.keys()).toEqual([]);
  });

  it('fn’s error propagates, and the lock is kept for atLeastFor all the same', async () => {
    const locks = fx.client();
    const redis = fx.redis();
    await expect(
      locks.runExclusive(
        'job',
        () => {
          throw new Error('job failed');
        },
        { atMostFor: 5_000, atLeastFor: 1_000 },
      ),
    ).rejects.toThrow('job failed');
    expect(await redis.pttl(`{${fx.prefix}:job}`)).toBeGreaterThan(500);
    await expect(locks.runExclusive('job2', () => Promise.reject(new Error('async failure')), { atMostFor: 5_000 })).rejects.toThrow('async failure');
    expect(await redis.exists(`{${fx.prefix}:job2}`)).toBe(0);
  });

  it('a run that outlives atMostFor is told by its lease’s signal; no lost event is left behind after it', async () => {
    const locks = fx.client();
    const lost: string[] = [];
    locks.on('lost', (info) => lost.push(info.reason));
    const result = await locks.runExclusive(
      'job',
      async (lease) => {
        await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
        return lease.signal.aborted;
      },
      { atMostFor: 300 },
    );
    expect(result).toEqual({ ran: true, value: true });
    expect(lost).toEqual(['expired']);
    // A fast run kept for atLeastFor is not reported lost when its key expires.
    await locks.runExclusive('job3', () => undefined, { atMostFor: 300, atLeastFor: 200 });
    await sleep(400);
    expect(lost).toEqual(['expired']);
  });

  it('an aborted signal rejects with its reason before the attempt', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    await expect(fx.client().runExclusive('job', () => 1, { atMostFor: 1_000, signal: controller.signal })).rejects.toThrow('stopped');
    expect(await fx.keys()).toEqual([]);
  });

  it('bad input is an InvalidArgumentError before anything is sent', async () => {
    const locks = fx.client();
    const recorder = await CommandRecorder.start(fx.url);
    const bad = (name: unknown, fn: unknown, options: unknown): Promise<unknown> =>
      locks.runExclusive(name as string, fn as () => void, options as { atMostFor: number });
    for (const call of [
      bad('', () => 1, { atMostFor: 1_000 }),
      bad('job', 'fn', { atMostFor: 1_000 }),
      bad('job', () => 1, {}),
      bad('job', () => 1, undefined),
      bad('job', () => 1, { atMostFor: 0 }),
      bad('job', () => 1, { atMostFor: Infinity }),
      bad('job', () => 1, { atMostFor: 1_000, atLeastFor: 2_000 }),
      bad('job', () => 1, { atMostFor: 1_000, atLeastFor: -1 }),
      bad('job', () => 1, { atMostFor: 1_000, signal: 'no' }),
      bad('job', () => 1, { atMostFor: 1_000, leaseTime: 5 }),
    ]) {
      await expect(call).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await recorder.stop();
    expect(recorder.commands.filter((args) => args.join(' ').includes(fx.prefix))).toEqual([]);
  });
});
