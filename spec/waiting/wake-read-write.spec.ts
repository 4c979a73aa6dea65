import { describe, expect, it } from 'vitest';
import { CommandRecorder, scriptCall } from '../helpers/command-stats.js';
import { useOwnServer } from '../helpers/own-server.js';
import { sleep } from '../helpers/fixtures.js';

describe('read-write wake-up: all readers at once, one writer at a time', () => {
  const own = useOwnServer({ keyPrefix: 'rw' });
  const client = own.client;
  let n = 0;

  const until = async (check: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> => {
    const deadline = performance.now() + timeoutMs;
    while (!(await check())) {
      if (performance.now() > deadline) throw new Error('condition not met in time');
      await sleep(5);
    }
  };

  it('with 10 writer clients waiting, a write release makes exactly one of them ask Redis again', async () => {
    const name = `writers-${(n += 1)}`;
    const holder = client().getReadWriteLock(name).writeLock();
    await holder.lock(60_000);
    let acquired = 0;
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    const writers = Array.from({ length: 10 }, async () => {
      const writer = client().getReadWriteLock(name).writeLock();
      await writer.lock(60_000);
      acquired += 1;
      await gate;
      await writer.unlock();
    });
    await until(async () => (await own.admin.zcard(`{rw:${name}}:waiters`)) === 10);
    await sleep(50);

    const recorder = await CommandRecorder.start(own.server.url);
    await holder.unlock();
    await until(() => acquired === 1);
    await sleep(200);
    await recorder.stop();
    // The release and the one woken writer's attempt: no herd.
    expect(recorder.names.map(scriptCall)).toEqual(['script', 'script']);
    letGo();
    await Promise.all(writers);
    expect(acquired).toBe(10);
    expect(await own.admin.exists(`{rw:${name}}`, `{rw:${name}}:readers`, `{rw:${name}}:waiters`)).toBe(0);
  });

  it('a write release wakes every reader client, each once, and no writer', async () => {
    const name = `readers-${(n += 1)}`;
    const holder = client().getReadWriteLock(name).writeLock();
    await holder.lock(60_000);
    let reading = 0;
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    // 5 reader clients with 2 local readers each, and 3 writer clients.
    const readerClients = Array.from({ length: 5 }, () => client());
    const readers = Array.from({ length: 10 }, async (_, i) => {
      const reader = readerClients[i % 5]!.getReadWriteLock(name).readLock();
      await reader.lock(60_000);
      reading += 1;
      await gate;
      await reader.unlock();
    });
    const writers = Array.from({ length: 3 }, async () => {
      const writer = client().getReadWriteLock(name).writeLock();
      await writer.lock(60_000);
      await writer.unlock();
    });
    await until(async () => (await own.admin.zcard(`{rw:${name}}:read-waiters`)) === 5);
    await until(async () => (await own.admin.zcard(`{rw:${name}}:waiters`)) === 3);
    await sleep(50);

    const recorder = await CommandRecorder.start(own.server.url);
    await holder.unlock();
    await until(() => reading === 10);
    await sleep(200);
    await recorder.stop();
    // The release, then one attempt per local reader (10); the writers sleep on.
    expect(recorder.names.map(scriptCall)).toEqual(Array.from({ length: 11 }, () => 'script'));
    expect(await own.admin.zcard(`{rw:${name}}:waiters`)).toBe(3);
    letGo();
    await Promise.all([...readers, ...writers]);
    expect(
      await own.admin.exists(`{rw:${name}}`, `{rw:${name}}:readers`, `{rw:${name}}:waiters`, `{rw:${name}}:read-waiters`),
    ).toBe(0);
  });
});
