import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { CommandRecorder } from '../helpers/command-stats.js';
import { sleep } from '../helpers/fixtures.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';

// ioredis sends a script's first call on a connection as EVAL, later ones as EVALSHA.
const scriptCall = (name: string): string => (name === 'evalsha' || name === 'eval' ? 'script' : name);

// Command counts need a server nobody else talks to: this file spawns its own.
describe('read-write wake-up: all readers at once, one writer at a time', () => {
  let server: SpawnedRedis;
  let admin: Redis;
  const closers: (() => Promise<void>)[] = [];
  let n = 0;

  beforeAll(async () => {
    server = await spawnRedis();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    admin.disconnect();
    await server.stop();
  });

  const client = (): LockClient => {
    const redis = new Redis(server.url);
    const locks = new LockClient(redis, { keyPrefix: 'rw' });
    closers.push(async () => {
      await locks.close();
      redis.disconnect();
    });
    return locks;
  };

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
    await until(async () => (await admin.zcard(`{rw:${name}}:waiters`)) === 10);
    await sleep(50);

    const recorder = await CommandRecorder.start(server.url);
    await holder.unlock();
    await until(() => acquired === 1);
    await sleep(200);
    await recorder.stop();
    // The release and the one woken writer's attempt: no herd.
    expect(recorder.names.map(scriptCall)).toEqual(['script', 'script']);
    letGo();
    await Promise.all(writers);
    expect(acquired).toBe(10);
    expect(await admin.exists(`{rw:${name}}`, `{rw:${name}}:readers`, `{rw:${name}}:waiters`)).toBe(0);
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
    await until(async () => (await admin.zcard(`{rw:${name}}:read-waiters`)) === 5);
    await until(async () => (await admin.zcard(`{rw:${name}}:waiters`)) === 3);
    await sleep(50);

    const recorder = await CommandRecorder.start(server.url);
    await holder.unlock();
    await until(() => reading === 10);
    await sleep(200);
    await recorder.stop();
    // The release, then one attempt per local reader (10); the writers sleep on.
    expect(recorder.names.map(scriptCall)).toEqual(Array.from({ length: 11 }, () => 'script'));
    expect(await admin.zcard(`{rw:${name}}:waiters`)).toBe(3);
    letGo();
    await Promise.all([...readers, ...writers]);
    expect(
      await admin.exists(`{rw:${name}}`, `{rw:${name}}:readers`, `{rw:${name}}:waiters`, `{rw:${name}}:read-waiters`),
    ).toBe(0);
  });
});
