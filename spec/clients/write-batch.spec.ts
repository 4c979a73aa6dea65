import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { lockKeys } from '../../lib/keys.js';
import { connectStandalone, type TestClient } from '../helpers/clients.js';
import { useLockFixture } from '../helpers/fixtures.js';

// ioredis and iovalkey write every command at once, one system call each. rlock corks the
// connection's socket at its first call of a tick and uncorks it when the tick's promise jobs have
// run (lib/redis/write-batch.ts): the calls of many tasks resolved by one batch of replies go out
// in one write. These specs pin that, and what it must not change: nothing stays corked, and a
// socket that drops in the middle of a batch loses nothing.

const FAMILIES: readonly TestClient[] = ['ioredis', 'iovalkey'];

/** Counts the socket's writes to the kernel: `_write` for one chunk, `_writev` for a corked batch. */
function countWrites(socket: Socket): { writes: number; batches: number } {
  const counts = { writes: 0, batches: 0 };
  const internals = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
  const write = internals._write.bind(socket);
  const writev = internals._writev.bind(socket);
  internals._write = (...args) => {
    counts.writes += 1;
    write(...args);
  };
  internals._writev = (...args) => {
    counts.batches += 1;
    writev(...args);
  };
  return counts;
}

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('writes batched per tick (ioredis family)', () => {
  const fx = useLockFixture();

  for (const family of FAMILIES) {
    it(`${family}: the calls of one tick go out in one write, and the socket is uncorked after it`, async () => {
      const redis = fx.track(connectStandalone(fx.url, {}, family)).connection as unknown as Redis;
      await redis.ping();
      const locks = fx.client({}, redis);
      await locks.getLock('warm').tryLock(0, 10_000); // scripts defined, connection ready
      const socket = redis.stream;
      const counts = countWrites(socket);
      const taken = await Promise.all(Array.from({ length: 40 }, (_, i) => locks.getLock(`batch-${i}`).tryLock(0, 10_000)));
      expect(taken.every(Boolean)).toBe(true);
      expect(counts.batches).toBe(1);
      expect(counts.writes).toBe(0);
      expect(socket.writableCorked).toBe(0);
      // The releases, made in one tick by the tasks their acquisitions resolved, too.
      const before = { ...counts };
      await Promise.all(Array.from({ length: 40 }, (_, i) => locks.runInContext(() => locks.getLock(`batch-${i}`).forceUnlock())));
      expect(counts.batches - before.batches).toBe(1);
      await nextTick();
      expect(socket.writableCorked).toBe(0);
    });

    it(`${family}: a socket reset in the middle of a batch loses no call`, async () => {
      const redis = fx.track(connectStandalone(fx.url, {}, family)).connection as unknown as Redis;
      const locks = fx.client({}, redis);
      await redis.ping();
      await locks.getLock('warm').tryLock(0, 10_000);
      const first = redis.stream;
      const calls = Array.from({ length: 30 }, (_, i) => locks.getLock(`reset-${i}`).tryLock(5_000, 10_000));
      // Corked: nothing has reached the socket yet; the reset drops it before the flush.
      first.destroy();
      expect((await Promise.all(calls)).every(Boolean)).toBe(true);
      expect(redis.stream).not.toBe(first);
      expect((redis.stream).writableCorked).toBe(0);
      // Each taken once: held in Redis by one owner with one hold.
      const admin = fx.redis();
      for (let i = 0; i < 30; i += 1) expect(Object.values(await admin.hgetall(lockKeys(fx.prefix, `reset-${i}`).lock)).filter((v) => /^\d+$/.test(v))).toEqual(['1']);
    });
  }
});
