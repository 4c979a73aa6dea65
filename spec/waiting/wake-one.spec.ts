import { describe, expect, it } from 'vitest';
import { CommandRecorder, scriptCall } from '../helpers/command-stats.js';
import { useOwnServer } from '../helpers/own-server.js';
import { sleep, until } from '../helpers/fixtures.js';

describe('wake-up: one waiter per release, no herd', () => {
  const own = useOwnServer({ keyPrefix: 'wake' });
  const client = own.client;
  let n = 0;

  const waitersOf = (name: string): Promise<number> => own.admin.zcard(`{wake:${name}}:waiters`);

  it('with 20 clients waiting, a release makes exactly one of them ask Redis again', async () => {
    const name = `herd-${(n += 1)}`;
    const holder = client().getLock(name);
    await holder.lock(60_000);
    let acquired = 0;
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    const waiters = Array.from({ length: 20 }, async () => {
      const lock = client().getLock(name);
      await lock.lock(60_000);
      acquired += 1;
      await gate;
      await lock.unlock();
    });
    await until(async () => (await waitersOf(name)) === 20);
    await sleep(50);

    const recorder = await CommandRecorder.start(own.server.url);
    await holder.unlock();
    await until(() => acquired === 1);
    await sleep(200);
    await recorder.stop();
    // The holder's release and the one woken client's attempt: nothing else reaches Redis.
    expect(recorder.names.map(scriptCall)).toEqual(['script', 'script']);
    expect(acquired).toBe(1);
    expect(await waitersOf(name)).toBe(19);

    // Each release hands over to exactly one more client until all are through.
    letGo();
    await Promise.all(waiters);
    expect(acquired).toBe(20);
    expect(await own.admin.exists(`{wake:${name}}`, `{wake:${name}}:waiters`)).toBe(0);
  });

  it('with 10 local waiters on one client, a release wakes one of them only', async () => {
    const name = `local-${(n += 1)}`;
    const holder = client().getLock(name);
    await holder.lock(60_000);
    const locks = client();
    let acquired = 0;
    const tasks = Array.from({ length: 10 }, async () => {
      const lock = locks.getLock(name);
      await lock.lock(60_000);
      acquired += 1;
      await sleep(1);
      await lock.unlock();
    });
    await until(async () => (await waitersOf(name)) === 1);
    await sleep(50);
    const recorder = await CommandRecorder.start(own.server.url);
    await holder.unlock();
    await until(() => acquired === 10);
    await Promise.all(tasks);
    await recorder.stop();
    // Per hand-over one attempt and one release, plus the holder's release: 10 + 10 + 1.
    // A local herd would send ~10 attempts per release.
    expect(recorder.names.map(scriptCall)).toEqual(Array.from({ length: 21 }, () => 'script'));
    expect(await own.admin.exists(`{wake:${name}}`, `{wake:${name}}:waiters`)).toBe(0);
  });

  it('skips a registered client that is gone and wakes the next one', async () => {
    const name = `dead-${(n += 1)}`;
    const holder = client().getLock(name);
    await holder.lock(60_000);
    const started = performance.now();
    const waiting = client().getLock(name).tryLock(30_000, 1_000);
    await until(async () => (await waitersOf(name)) === 1);
    // A client that registered first and died: nobody is subscribed to its channel.
    await own.admin.zadd(`{wake:${name}}:waiters`, 0, 'dead-client');
    await holder.unlock();
    expect(await waiting).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await own.admin.zscore(`{wake:${name}}:waiters`, 'dead-client')).toBeNull();
  });

  it('drops a lock subscription once its last waiter has left and the linger passed', async () => {
    const name = `subs-${(n += 1)}`;
    const holder = client().getLock(name);
    await holder.lock(60_000);
    const waiter = client().getLock(name);
    const waiting = waiter.tryLock(10_000, 1_000);
    await until(async () => (await own.admin.pubsub('CHANNELS', `{wake:${name}}*`)).length === 1);
    await holder.unlock();
    expect(await waiting).toBe(true);
    await waiter.unlock();
    await until(async () => (await own.admin.pubsub('CHANNELS', `{wake:${name}}*`)).length === 0, 5_000);
    expect(await own.admin.exists(`{wake:${name}}`, `{wake:${name}}:waiters`)).toBe(0);
  });

  it('an uncontended lock + unlock is exactly two commands (two round trips)', async () => {
    const lock = client().getLock(`solo-${(n += 1)}`);
    await lock.tryLock();
    await lock.unlock();
    const recorder = await CommandRecorder.start(own.server.url);
    for (let i = 0; i < 50; i += 1) {
      await lock.lock();
      await lock.unlock();
    }
    await recorder.stop();
    expect(recorder.names.map(scriptCall)).toEqual(Array.from({ length: 100 }, () => 'script'));
  });
});
