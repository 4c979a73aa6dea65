import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient, LockLostError, type LockLostInfo } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { ALL_KINDS, lockOf, take } from './kinds.js';

describe('maxHoldTime', () => {
  const fx = useLockFixture();

  for (const kind of ALL_KINDS) {
    it(`${kind}: a watchdog hold is renewed until maxHoldTime, then let go — the holder is told before a waiter gets it`, async () => {
      const holder = fx.client({ watchdogTimeout: 1_500, maxHoldTime: 2_000 });
      const lost: { info: LockLostInfo; at: number }[] = [];
      holder.on('lost', (info) => lost.push({ info, at: performance.now() }));
      const start = performance.now();
      const held = (await take(holder, kind, 'x'))!;
      expect(held).not.toBeNull();
      // A waiter in another client: it gets the lock only once the holder let go.
      const waiterKind = kind === 'read' ? 'write' : kind;
      const waiting = take(fx.client(), waiterKind, 'x', { waitTime: 8_000 }).then((got) => ({ got, at: performance.now() }));
      // Renewed past its first watchdog lease: still held 1.7 s after the call began (counted from
      // before the call, as the cap is measured below).
      await sleep(Math.max(0, start + 1_700 - performance.now()));
      expect(held.signal.aborted).toBe(false);
      const { got, at } = await waiting;
      expect(got).not.toBeNull();
      expect(lost).toHaveLength(1);
      expect(lost[0]!.info.reason).toBe('max-hold-time');
      expect(lost[0]!.at - start).toBeGreaterThanOrEqual(1_990);
      // Told first; and let go in Redis at once: left to its lease, it would last 1 000–1 500 ms more.
      expect(lost[0]!.at).toBeLessThanOrEqual(at);
      expect(at - lost[0]!.at).toBeLessThan(800);
      expect(held.signal.reason).toBeInstanceOf(LockLostError);
      expect((held.signal.reason as LockLostError).reason).toBe('max-hold-time');
      await held.release();
      await got!.release();
    });
  }

  it('a per-call maxHoldTime overrides the client’s; fixed leases are not capped', async () => {
    const client = fx.client({ watchdogTimeout: 300, maxHoldTime: 60_000 });
    const reasons: string[] = [];
    client.on('lost', (info) => reasons.push(info.reason));
    const lease = await client.getLock('a').acquire({ maxHoldTime: 400 });
    const fixed = await client.getLock('b').acquire({ leaseTime: 2_000, maxHoldTime: 100 });
    const permit = await client.getSemaphore('s', { permits: 2 }).acquire({ maxHoldTime: 400 });
    await sleep(800);
    expect(lease.signal.aborted).toBe(true);
    expect(permit.signal.aborted).toBe(true);
    expect(fixed.signal.aborted).toBe(false);
    expect(reasons).toEqual(['max-hold-time', 'max-hold-time']);
    expect(await client.getLock('a').isLocked()).toBe(false);
    expect(await client.getSemaphore('s', { permits: 2 }).availablePermits()).toBe(2);
    await fixed.release();
  });

  it('lock(), tryLock() and the fenced token calls take it too; a hold released before its cap is not touched', async () => {
    const client = fx.client({ watchdogTimeout: 300 });
    const reasons: string[] = [];
    client.on('lost', (info) => reasons.push(info.reason));
    await client.runInContext(async () => {
      const lock = client.getLock('a');
      await lock.lock(-1, { maxHoldTime: 300 });
      const fenced = client.getFencedLock('f');
      await fenced.lockAndGetToken(-1, { maxHoldTime: 300 });
      const tried = client.getFencedLock('t');
      expect(await tried.tryLockAndGetToken({ waitTime: 0, maxHoldTime: 300 })).toBeTypeOf('number');
      await sleep(600);
      expect([await lock.isLocked(), await fenced.isLocked(), await tried.isLocked()]).toEqual([false, false, false]);
    });
    const lock = client.getLock('b');
    expect(await lock.tryLock(0, -1, { maxHoldTime: 300 })).toBe(true);
    await lock.unlock();
    await sleep(500);
    expect(reasons).toEqual(['max-hold-time', 'max-hold-time', 'max-hold-time']);
  });

  it('a re-entry with an earlier cap moves the deadline forward', async () => {
    const client = fx.client({ watchdogTimeout: 300 });
    client.on('lost', () => undefined);
    await client.runInContext(async () => {
      const lock = lockOf(client, 'lock', 'r');
      const outer = await lock.acquire({ maxHoldTime: 10_000 });
      await lock.acquire({ maxHoldTime: 300 });
      await sleep(600);
      expect(outer.signal.aborted).toBe(true);
      expect(await lock.isLocked()).toBe(false);
    });
  });

  it('rejects a bad maxHoldTime before anything is sent', async () => {
    expect(() => new LockClient(fx.redis(), { maxHoldTime: 0 })).toThrow(InvalidArgumentError);
    expect(() => new LockClient(fx.redis(), { maxHoldTime: -5 })).toThrow(InvalidArgumentError);
    const client = fx.client();
    await expect(client.getLock('a').acquire({ maxHoldTime: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.getLock('a').lock(-1, { maxHoldTime: 'x' as unknown as number })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.getSemaphore('s', { permits: 1 }).acquire({ maxHoldTime: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await fx.keys()).toEqual([]);
  });
});
