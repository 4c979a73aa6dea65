import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isLockError, LockClientClosedError, LockError, type LockEventInfo } from '../lib/index.js';
import { lockKeys } from '../lib/keys.js';
import { sleep, useLockFixture } from './helpers/fixtures.js';

// Redis Cluster's key slot (CRC16/XMODEM of the hash tag), to check all keys of a lock share one.
function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
function slot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const tagged = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(tagged) % 16_384;
}

describe('LockClient', () => {
  const fx = useLockFixture();

  it('has a random UUID id; owners are `${id}:${context}`', async () => {
    const locks = fx.client();
    expect(locks.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(fx.client().id).not.toBe(locks.id);
    const lease = await locks.getLock('x').acquire();
    expect(lease.owner.startsWith(`${locks.id}:`)).toBe(true);
    await lease.release();
  });

  it('emits acquired and released with the lock name and owner', async () => {
    const locks = fx.client();
    const events: [string, LockEventInfo][] = [];
    locks.on('acquired', (info) => events.push(['acquired', info]));
    locks.on('released', (info) => events.push(['released', info]));
    const lock = locks.getLock('events');
    await locks.runInContext(async () => {
      await lock.lock();
      await lock.lock();
      await lock.unlock();
      await lock.unlock();
    });
    expect(events.map(([kind]) => kind)).toEqual(['acquired', 'acquired', 'released']);
    expect(events[0]![1].name).toBe('events');
    expect(new Set(events.map(([, info]) => info.owner)).size).toBe(1);
  });

  it('close() rejects waiting calls, is idempotent, and later calls reject', async () => {
    await fx.client().getLock('c').lock(30_000);
    const locks = fx.client();
    const waiting = locks
      .getLock('c')
      .tryLock(20_000)
      .catch((error: unknown) => error);
    await sleep(50);
    await Promise.all([locks.close(), locks.close()]);
    expect(await waiting).toBeInstanceOf(LockClientClosedError);
    await expect(locks.getLock('c').tryLock()).rejects.toBeInstanceOf(LockClientClosedError);
    await locks.close();
  });

  it('close() does not close the connections it was given', async () => {
    const redis = fx.redis();
    const subscriber = fx.redis();
    const locks = fx.client({ subscriber }, redis);
    await locks.getLock('s').tryLock();
    await locks.close();
    expect(await redis.ping()).toBe('PONG');
    expect(await subscriber.ping()).toBe('PONG');
  });

  it('works behind an ioredis keyPrefix (which prefixes keys but not channels)', async () => {
    const conn = (): Redis => fx.redis({ keyPrefix: `${fx.prefix}-io:` });
    const holder = fx.client({}, conn()).getLock('kp');
    await holder.lock(60_000);
    const started = performance.now();
    const waiting = fx.client({}, conn()).getLock('kp').tryLock(30_000, 1_000);
    await sleep(50);
    await holder.unlock();
    expect(await waiting).toBe(true);
    // Woken by the notice, not by the 60 s TTL.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await fx.keys()).toEqual([`${fx.prefix}-io:{${fx.prefix}:kp}`]);
  });

  it.each([['with space'], ['ünïcødé 🔒'], ['{braces}'], ['a}b{c'], ['}'], ['{'], ['x'.repeat(10_240)]])(
    'any non-empty name works and keeps all its keys in one slot: %#',
    async (name) => {
      const locks = fx.client();
      const lock = locks.getLock(name);
      const holder = await lock.acquire();
      const waiting = fx.client().getLock(name).tryLock(5_000, 1_000);
      await sleep(20);
      await holder.release();
      expect(await waiting).toBe(true);
      const keys = lockKeys(fx.prefix, name);
      const fairKeys = [keys.queue, keys.queueTimeouts, `${keys.turnPrefix}${locks.id}`];
      const slots = new Set([keys.lock, keys.waiters, `${keys.wakePrefix}${locks.id}`, ...fairKeys].map(slot));
      expect(slots.size).toBe(1);
      expect(lockKeys(fx.prefix, `${name}!`).lock).not.toBe(keys.lock);
    },
  );

  it('errors are recognisable across module copies', () => {
    const error = new LockClientClosedError('x');
    expect(error).toBeInstanceOf(LockError);
    expect(isLockError(error)).toBe(true);
    expect(isLockError(new Error('x'))).toBe(false);
    expect(isLockError({ code: 'LOCK_ERROR' })).toBe(false);
  });
});
