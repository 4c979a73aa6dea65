import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { CommandRecorder } from '../helpers/command-stats.js';
import { sleep } from '../helpers/fixtures.js';
import { useOwnServer } from '../helpers/own-server.js';

/** Calls of one command so far (INFO commandstats counts the calls scripts make too). */
async function calls(admin: Redis, command: string): Promise<number> {
  const info = await admin.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

describe('wake-up: push, no polling, no herd', () => {
  const own = useOwnServer({ keyPrefix: 'w' });

  it('semaphore: waiters send nothing while permits are held; each release wakes only clients that can proceed', async () => {
    const holder = own.client();
    const sem = holder.getSemaphore('s', { permits: 3 });
    const held = await Promise.all([1, 2, 3].map(() => sem.acquire({ leaseTime: 60_000 })));
    const clients = [own.client(), own.client(), own.client(), own.client()];
    const done: number[] = [];
    const waiters = Array.from({ length: 12 }, async (_, i) => {
      const permit = await clients[i % 4]!.getSemaphore('s', { permits: 3 }).acquire({ waitTime: 20_000 });
      await sleep(10);
      await permit.release();
      done.push(i);
    });
    await sleep(300); // every waiter has tried, subscribed, tried again, and sleeps
    const recorder = await CommandRecorder.start(own.server.url);
    await sleep(1_000);
    expect(recorder.scriptCalls).toBe(0); // no polling while held
    const publishesBefore = await calls(own.admin, 'publish');
    recorder.reset();
    for (const permit of held) await permit.release();
    await Promise.all(waiters);
    await recorder.stop();
    expect(done).toHaveLength(12);
    // 15 releases, 12 acquisitions: a herd would retry on every release.
    const releases = 15;
    expect(recorder.scriptCalls).toBeLessThanOrEqual(12 + releases + 12);
    // At most one notice per client per release (3 permits freed at a time at most).
    expect((await calls(own.admin, 'publish')) - publishesBefore).toBeLessThanOrEqual(releases);
  }, 30_000);

  it('semaphore: releases in a row wake no more clients than the free permits serve (promised permits are not offered again)', async () => {
    const holder = own.client();
    const sem = holder.getSemaphore('r', { permits: 3 });
    const held = await Promise.all([1, 2, 3].map(() => sem.acquire({ leaseTime: 60_000 })));
    const clients = [own.client(), own.client(), own.client()];
    const got: number[] = [];
    const waits = clients.map(async (client, i) => {
      const permit = await client.getSemaphore('r', { permits: 3 }).acquire({ waitTime: 20_000, leaseTime: 60_000 });
      got.push(i);
      return permit;
    });
    for (let i = 0; i < 200 && (await own.admin.zcard('{w:r}:semaphore:waiters')) < 3; i += 1) await sleep(10);
    await sleep(200);
    const before = await calls(own.admin, 'publish');
    // Sent together: the second runs before the first's woken client took its permit.
    await Promise.all([held[0]!.release(), held[1]!.release()]);
    for (let i = 0; i < 200 && got.length < 2; i += 1) await sleep(10);
    await sleep(200);
    expect(got).toHaveLength(2);
    expect((await calls(own.admin, 'publish')) - before).toBe(2); // one notice per free permit
    await held[2]!.release();
    const permits = await Promise.all(waits);
    expect((await calls(own.admin, 'publish')) - before).toBe(3);
    for (const permit of permits) await permit.release();
  }, 30_000);

  it('latch: reaching 0 wakes 100 waiters on 10 clients with one notice per client', async () => {
    const gate = own.client().getCountDownLatch('gate');
    expect(await gate.trySetCount(1)).toBe(true);
    const clients = Array.from({ length: 10 }, () => own.client());
    const waits = Array.from({ length: 100 }, (_, i) => clients[i % 10]!.getCountDownLatch('gate').wait({ waitTime: 20_000 }));
    for (let i = 0; i < 200 && (await own.admin.zcard('{w:gate}:latch:waiters')) < 10; i += 1) await sleep(10);
    expect(await own.admin.zcard('{w:gate}:latch:waiters')).toBe(10);
    const recorder = await CommandRecorder.start(own.server.url);
    await sleep(300);
    expect(recorder.scriptCalls).toBe(0);
    const before = await calls(own.admin, 'publish');
    expect(await gate.countDown()).toBe(0);
    expect(await Promise.all(waits)).toEqual(Array.from({ length: 100 }, () => true));
    await recorder.stop();
    expect((await calls(own.admin, 'publish')) - before).toBe(10);
    expect(await own.admin.exists('{w:gate}:latch', '{w:gate}:latch:waiters')).toBe(0);
  }, 30_000);
});
