import { describe, expect, it } from 'vitest';
import { contend } from '../helpers/contend.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('fenced lock', () => {
  const fx = useLockFixture();
  const tokenKey = (name: string): string => `{${fx.prefix}:${name}}:token`;

  it('tokens grow strictly with every acquisition, across clients', async () => {
    const clients = Array.from({ length: 3 }, () => fx.client());
    const tokens: number[] = [];
    for (let i = 0; i < 9; i += 1) {
      const lock = clients[i % 3]!.getFencedLock('across');
      tokens.push(await lock.lockAndGetToken());
      await lock.unlock();
    }
    expect(tokens).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
    // The counter is the only key left.
    expect(await fx.keys()).toEqual([tokenKey('across')]);
  });

  it('concurrent holders over 4 clients never overlap, and each gets a greater token than the last', async () => {
    const clients = Array.from({ length: 4 }, () => fx.client());
    const probe = fx.redis();
    let last = 0;
    let notGreater = 0;
    let inside = 0;
    let overlaps = 0;
    await Promise.all(
      Array.from({ length: 12 }, async (_, task) => {
        const lock = clients[task % 4]!.getFencedLock('concurrent');
        for (let round = 0; round < 10; round += 1) {
          const token = await lock.lockAndGetToken();
          try {
            inside += 1;
            if (inside !== 1 || (await probe.incr(`${fx.prefix}:probe`)) !== 1) overlaps += 1;
            if (token <= last) notGreater += 1;
            last = token;
            await probe.decr(`${fx.prefix}:probe`);
            inside -= 1;
          } finally {
            await lock.unlock();
          }
        }
      }),
    );
    expect({ overlaps, notGreater, last }).toEqual({ overlaps: 0, notGreater: 0, last: 120 });
  });

  it('is an RLock like any other: 20 tasks × 10 rounds over 5 clients never overlap', async () => {
    const locks = Array.from({ length: 5 }, () => fx.client().getFencedLock('contend'));
    const result = await contend((task) => locks[task % 5]!, fx.redis(), `${fx.prefix}:probe`, 20, 10);
    expect(result).toEqual({ entries: 200, violations: 0 });
    expect((await fx.keys()).sort()).toEqual([`${fx.prefix}:probe`, tokenKey('contend')].sort());
  });

  it('a re-entry returns the holder token; getToken tells the current token or null', async () => {
    const locks = fx.client();
    const lock = locks.getFencedLock('reentry');
    expect(await lock.getToken()).toBeNull();
    await locks.runInContext(async () => {
      const first = await lock.lockAndGetToken();
      expect(await lock.tryLockAndGetToken()).toBe(first);
      expect(await lock.getHoldCount()).toBe(2);
      expect(await lock.getToken()).toBe(first);
      // Another owner sees the holder's token, and cannot take the lock.
      expect(await fx.client().getFencedLock('reentry').getToken()).toBe(first);
      expect(await locks.runInContext(() => lock.tryLockAndGetToken(50))).toBeNull();
      await lock.unlock();
      await lock.unlock();
    });
    expect(await lock.getToken()).toBeNull();
    expect(await fx.keys()).toEqual([tokenKey('reentry')]);
  });

  it('tokens keep growing after the lock expired and after forceUnlock', async () => {
    const first = fx.client().getFencedLock('expiry');
    const second = fx.client().getFencedLock('expiry');
    const t1 = await first.lockAndGetToken(200);
    await sleep(300);
    expect(await first.isLocked()).toBe(false);
    const t2 = await second.lockAndGetToken(10_000);
    expect(await second.forceUnlock()).toBe(true);
    const t3 = (await first.tryLockAndGetToken({ waitTime: 0, leaseTime: 10_000 }))!;
    expect(t2).toBeGreaterThan(t1);
    expect(t3).toBeGreaterThan(t2);
    await first.unlock();
    expect(await fx.keys()).toEqual([tokenKey('expiry')]);
  });

  it('Lease.token is set by acquire() and withLock, and matches getToken', async () => {
    const lock = fx.client().getFencedLock('lease');
    const lease = await lock.acquire({ leaseTime: 10_000 });
    expect(lease.token).toBe(1);
    expect(await lock.getToken()).toBe(1);
    await lease.release();
    const seen = await lock.withLock(async (inner) => [inner.token, await lock.getToken()]);
    expect(seen).toEqual([2, 2]);
    // Plain locks carry no token.
    const plain = await fx.client().getLock('plain').acquire();
    expect(plain.token).toBeUndefined();
    await plain.release();
  });

  it('tryLockAndGetToken waits for a release and gives null when its budget runs out', async () => {
    const holder = fx.client().getFencedLock('wait');
    const waiter = fx.client().getFencedLock('wait');
    const held = await holder.lockAndGetToken(60_000);
    expect(await waiter.tryLockAndGetToken(200, 1_000)).toBeNull();
    const waiting = waiter.tryLockAndGetToken(20_000, 1_000);
    await sleep(100);
    const released = performance.now();
    await holder.unlock();
    expect(await waiting).toBe(held + 1);
    // Woken by the release notice, not by the holder's 60 s lease.
    expect(performance.now() - released).toBeLessThan(3_000);
    await waiter.unlock();
  });
});
