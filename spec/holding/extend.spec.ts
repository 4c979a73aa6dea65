import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockLostError } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { ALL_KINDS, take, takenByOther } from './kinds.js';

describe('lease.extend(ms)', () => {
  const fx = useLockFixture();

  for (const kind of ALL_KINDS) {
    describe(kind, () => {
      it('keeps a fixed-lease hold past its first lease; the signal follows', async () => {
        const client = fx.client();
        const held = (await take(client, kind, 'x', { leaseTime: 400 }))!;
        expect(held).not.toBeNull();
        await held.extend(2_000);
        await sleep(700);
        // The first lease is over: still held, by the holder's clock and in Redis.
        expect(held.signal.aborted).toBe(false);
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(true);
        await held.release();
        expect(await takenByOther(fx.client(), kind, 'x')).toBe(false);
      });

      it('the holder is told when the extended lease ends', async () => {
        const client = fx.client();
        const lost: string[] = [];
        client.on('lost', (info) => lost.push(info.reason));
        const held = (await take(client, kind, 'x', { leaseTime: 200 }))!;
        await held.extend(500);
        const start = performance.now();
        await new Promise((resolve) => held.signal.addEventListener('abort', resolve, { once: true }));
        expect(performance.now() - start).toBeGreaterThan(300);
        expect(held.signal.reason).toBeInstanceOf(LockLostError);
        expect(lost).toEqual(['expired']);
      });

      it('rejects a watchdog-mode hold and bad durations before sending anything', async () => {
        const client = fx.client();
        const watched = (await take(client, kind, 'w'))!;
        await expect(watched.extend(1_000)).rejects.toBeInstanceOf(InvalidArgumentError);
        await watched.release();
        const held = (await take(client, kind, 'x', { leaseTime: 1_000 }))!;
        for (const bad of [-1, 0, 10, Number.NaN, Infinity, 2 ** 31, '500' as unknown as number, undefined as unknown as number]) {
          await expect(held.extend(bad)).rejects.toBeInstanceOf(InvalidArgumentError);
        }
        await held.release();
      });

      it('rejects with LockLostError once released, or when the hold is gone in Redis', async () => {
        const client = fx.client();
        client.on('lost', () => undefined);
        const held = (await take(client, kind, 'x', { leaseTime: 5_000 }))!;
        await held.release();
        await expect(held.extend(1_000)).rejects.toBeInstanceOf(LockLostError);

        const again = (await take(client, kind, 'y', { leaseTime: 5_000 }))!;
        const key = kind === 'permit' ? `{${fx.prefix}:y}:semaphore` : `{${fx.prefix}:y}`;
        const admin = fx.redis();
        await admin.del(key, `${key}:readers`);
        await expect(again.extend(1_000)).rejects.toBeInstanceOf(LockLostError);
        expect(again.signal.aborted).toBe(true);
        await again.release();
      });
    });
  }

  it('never shortens a lease', async () => {
    const client = fx.client();
    const lease = await client.getLock('x').acquire({ leaseTime: 5_000 });
    await lease.extend(100);
    expect(await client.getLock('x').remainTimeToLive()).toBeGreaterThan(4_000);
    await lease.release();
  });

  it('a fenced lease keeps its token; records expire and nothing is left', async () => {
    const client = fx.client();
    const lease = await client.getFencedLock('x').acquire({ leaseTime: 1_000 });
    await lease.extend(1_500);
    expect(await client.getFencedLock('x').getToken()).toBe(lease.token);
    await lease.release();
    const records = await fx.records();
    expect(records.every((record) => record.ttlMs > 0 && record.ttlMs <= 60_000)).toBe(true);
    expect((await fx.keys()).filter((key) => !key.endsWith(':token'))).toEqual([]);
  });
});
