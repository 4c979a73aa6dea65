import { describe, expect, it } from 'vitest';
import { lockKeys } from '../../lib/keys.js';
import { CommandRecorder, scriptCall } from '../helpers/command-stats.js';
import { useOwnServer } from '../helpers/own-server.js';
import { sleep, until } from '../helpers/fixtures.js';

describe('fair lock: a release tells only the head', () => {
  // Check-ins every 20 s: none falls inside a measurement.
  const own = useOwnServer({ keyPrefix: 'turn', fairLockWaitTimeout: 60_000 });
  const client = own.client;
  let n = 0;

  it('with 10 clients queued, a release is followed by the head alone', async () => {
    const name = `head-${(n += 1)}`;
    const { queue } = lockKeys('turn', name);
    const holder = client().getFairLock(name);
    await holder.lock(60_000);
    const acquired: number[] = [];
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 10; i += 1) {
      const lock = client().getFairLock(name);
      waiters.push(
        (async () => {
          await lock.lock(60_000);
          acquired.push(i);
          await gate;
          await lock.unlock();
        })(),
      );
      await until(async () => (await own.admin.zcard(queue)) === i + 1);
    }
    await sleep(50);

    const recorder = await CommandRecorder.start(own.server.url);
    await holder.unlock();
    await until(() => acquired.length === 1);
    await sleep(200);
    await recorder.stop();
    // The release, then the head's attempt: the 9 others sleep on.
    expect(recorder.names.map(scriptCall)).toEqual(['script', 'script']);
    expect(acquired).toEqual([0]);
    expect(await own.admin.zcard(queue)).toBe(9);

    letGo();
    await Promise.all(waiters);
    expect(acquired).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await own.admin.exists(`{turn:${name}}`, queue, lockKeys('turn', name).queueTimeouts)).toBe(0);
  });

  it('with 10 waiters on one client, each turn wakes the one named, in queue order', async () => {
    const name = `local-${(n += 1)}`;
    const { queue } = lockKeys('turn', name);
    const holder = client().getFairLock(name);
    await holder.lock(60_000);
    const locks = client();
    const acquired: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 10; i += 1) {
      const lock = locks.getFairLock(name);
      waiters.push(
        (async () => {
          await lock.lock(60_000);
          acquired.push(i);
          await sleep(1);
          await lock.unlock();
        })(),
      );
      await until(async () => (await own.admin.zcard(queue)) === i + 1);
    }
    await sleep(50);
    const recorder = await CommandRecorder.start(own.server.url);
    await holder.unlock();
    await Promise.all(waiters);
    await recorder.stop();
    expect(acquired).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Per turn the head's attempt and its release, plus the holder's release: 10 + 10 + 1.
    // Waking any other local waiter would add attempts (or stall until a check-in, 20 s away).
    expect(recorder.names.map(scriptCall)).toEqual(Array.from({ length: 21 }, () => 'script'));
  });

  it('an uncontended lock + unlock is exactly two commands', async () => {
    const lock = client().getFairLock(`solo-${(n += 1)}`);
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
