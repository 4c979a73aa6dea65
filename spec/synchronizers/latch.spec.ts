import { describe, expect, it } from 'vitest';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('count-down latch', () => {
  const fx = useLockFixture();

  it('an unset latch counts 0, opens at once, and countDown() writes nothing on it', async () => {
    const latch = fx.client().getCountDownLatch('l');
    expect(await latch.getCount()).toBe(0);
    expect(await latch.wait()).toBe(true);
    expect(await latch.countDown()).toBe(0);
    expect(await fx.keys()).toEqual([]);
    expect(await fx.records()).toEqual([]);
  });

  it('of concurrent trySetCount calls exactly one is true; never below 0; the key goes away at 0', async () => {
    const clients = [fx.client(), fx.client(), fx.client()];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => clients[i % 3]!.getCountDownLatch('l').trySetCount(i + 1)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const latch = clients[0]!.getCountDownLatch('l');
    const count = await latch.getCount();
    expect(count).toBe(results.indexOf(true) + 1);
    const left = await Promise.all(Array.from({ length: count + 3 }, () => latch.countDown()));
    expect(left.filter((n) => n === 0)).toHaveLength(4);
    expect(await latch.getCount()).toBe(0);
    expect(await fx.keys()).toEqual([]);
    expect(await latch.trySetCount(2)).toBe(true);
  });

  it('wait: false when waitTime runs out, rejects on abort, true for waiters of every client at 0', async () => {
    const latch = fx.client().getCountDownLatch('l');
    await latch.trySetCount(2);
    const started = performance.now();
    expect(await latch.wait({ waitTime: 150 })).toBe(false);
    expect(performance.now() - started).toBeLessThan(400);
    expect(await latch.wait({ waitTime: 0 })).toBe(false);
    const controller = new AbortController();
    const aborted = latch.wait({ signal: controller.signal });
    await sleep(30);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    const others = [fx.client(), fx.client()];
    const waits = others.flatMap((c) => [c.getCountDownLatch('l').wait(), c.getCountDownLatch('l').wait({ waitTime: 10_000 })]);
    await sleep(100);
    await latch.countDown();
    await sleep(50);
    await latch.countDown();
    expect(await Promise.all(waits)).toEqual([true, true, true, true]);
    expect(await fx.keys()).toEqual([]);
  });
});
