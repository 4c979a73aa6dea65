import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  diagnosticsChannels,
  type HoldEndMessage,
  type HoldStartMessage,
  type AcquireEndMessage,
  type AcquireStartMessage,
  type LockAcquiredInfo,
  type LockReleasedInfo,
  type LostMessage,
  type ReleaseMessage,
  type RenewMessage,
} from '../../lib/index.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';

describe('telemetry on node:diagnostics_channel', () => {
  const fx = useLockFixture();
  const subscriptions: [string, (message: unknown) => void][] = [];
  const listen = <T>(name: string): T[] => {
    const seen: T[] = [];
    const fn = (message: unknown): void => void seen.push(message as T);
    subscribe(name, fn);
    subscriptions.push([name, fn]);
    return seen;
  };
  afterEach(() => {
    for (const [name, fn] of subscriptions.splice(0)) unsubscribe(name, fn);
  });

  it('acquire start/end with wait time and attempts, release with hold time; the events carry them too', async () => {
    const starts = listen<AcquireStartMessage>(diagnosticsChannels.acquireStart);
    const ends = listen<AcquireEndMessage>(diagnosticsChannels.acquireEnd);
    const releases = listen<ReleaseMessage>(diagnosticsChannels.release);
    const holder = fx.client();
    const waiter = fx.client();
    const acquired: LockAcquiredInfo[] = [];
    const released: LockReleasedInfo[] = [];
    waiter.on('acquired', (info) => acquired.push(info));
    holder.on('released', (info) => released.push(info));

    const lease = await holder.getLock('busy').acquire();
    const waiting = waiter.getLock('busy').acquire({ waitTime: 5_000 });
    await sleep(120);
    await lease.release();
    const second = await waiting;
    await second.release();

    const mine = (list: { clientId: string }[], id: string) => list.filter((m) => m.clientId === id);
    expect(mine(starts, holder.id)).toEqual([{ name: 'busy', owner: lease.owner, clientId: holder.id, kind: 'lock' }]);
    const [first] = mine(ends, holder.id) as AcquireEndMessage[];
    expect(first).toMatchObject({ name: 'busy', acquired: true, attempts: 1, kind: 'lock' });
    expect(first!.waitMs).toBeLessThan(1_000);
    const [waited] = mine(ends, waiter.id) as AcquireEndMessage[];
    expect(waited).toMatchObject({ owner: second.owner, acquired: true });
    expect(waited!.attempts).toBeGreaterThanOrEqual(2);
    expect(waited!.waitMs).toBeGreaterThanOrEqual(100);
    expect(acquired).toEqual([{ name: 'busy', owner: second.owner, waitMs: waited!.waitMs, attempts: waited!.attempts }]);
    const [heldRelease] = mine(releases, holder.id) as ReleaseMessage[];
    expect(heldRelease!.owner).toBe(lease.owner);
    expect(heldRelease!.heldMs).toBeGreaterThanOrEqual(100);
    expect(released).toEqual([{ name: 'busy', owner: lease.owner, heldMs: heldRelease!.heldMs }]);
  });

  it('an acquisition that gives up ends with acquired: false; a fair and a read-write lock say their kind', async () => {
    const ends = listen<AcquireEndMessage>(diagnosticsChannels.acquireEnd);
    const a = fx.client();
    const b = fx.client();
    await a.getFairLock('f').lock();
    expect(await b.getFairLock('f').tryLock(80)).toBe(false);
    await a.getReadWriteLock('rw').writeLock().lock();
    const fromB = ends.filter((m) => m.clientId === b.id);
    expect(fromB).toHaveLength(1);
    expect(fromB[0]).toMatchObject({ kind: 'fair-lock', acquired: false, attempts: undefined });
    expect(fromB[0]!.waitMs).toBeGreaterThanOrEqual(75);
    expect(ends.filter((m) => m.clientId === a.id).map((m) => m.kind)).toEqual(['fair-lock', 'write']);
  });

  it('hold start and end pair up (re-entries are no new hold; a Permit counts its permits); acquire end says the outcome', async () => {
    const starts = listen<HoldStartMessage>(diagnosticsChannels.holdStart);
    const ends = listen<HoldEndMessage>(diagnosticsChannels.holdEnd);
    const acquireEnds = listen<AcquireEndMessage>(diagnosticsChannels.acquireEnd);
    const locks = fx.client();
    const other = fx.client();
    const lock = locks.getLock('held');
    let owner = '';
    await locks.runInContext(async () => {
      await lock.lock();
      await lock.lock();
      owner = (await lock.getHolders())[0]!.owner;
      await lock.unlock();
      expect(ends.filter((m) => m.clientId === locks.id)).toEqual([]);
      await lock.unlock();
    });
    const permit = await locks.getSemaphore('sem', { permits: 3 }).acquire({ permits: 2 });
    await permit.release();
    const mine = <T extends { clientId: string }>(list: T[]): T[] => list.filter((m) => m.clientId === locks.id);
    expect(mine(starts)).toEqual([
      { name: 'held', owner, clientId: locks.id, kind: 'lock', permits: 1 },
      { name: 'sem', owner: permit.id, clientId: locks.id, kind: 'semaphore', permits: 2 },
    ]);
    expect(mine(ends).map(({ heldMs, ...rest }) => (expect(heldMs).toBeGreaterThanOrEqual(0), rest))).toEqual([
      { name: 'held', owner, clientId: locks.id, kind: 'lock', permits: 1, reason: 'released' },
      { name: 'sem', owner: permit.id, clientId: locks.id, kind: 'semaphore', permits: 2, reason: 'released' },
    ]);
    expect(mine(acquireEnds).map((m) => [m.kind, m.outcome])).toEqual([['lock', 'acquired'], ['lock', 'acquired'], ['semaphore', 'acquired']]);

    const held = await other.getLock('busy').acquire();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(locks.getLock('busy').acquire({ signal: controller.signal })).rejects.toThrow();
    expect(await locks.getLock('busy').tryLock(30)).toBe(false);
    await held.release();
    expect(mine(acquireEnds).slice(3).map((m) => [m.outcome, m.acquired])).toEqual([['aborted', false], ['timeout', false]]);
  });

  it('renew and lost (with the reason) from the watchdog', async () => {
    const renews = listen<RenewMessage>(diagnosticsChannels.renew);
    const losses = listen<LostMessage>(diagnosticsChannels.lost);
    const locks = fx.client({ watchdogTimeout: 300 });
    locks.on('lost', () => undefined);
    const lease = await locks.getLock('dog').acquire();
    await until(() => renews.some((m) => m.clientId === locks.id), 2_000);
    expect(renews.find((m) => m.clientId === locks.id)).toEqual({ name: 'dog', owner: lease.owner, clientId: locks.id });
    await fx.client().getLock('dog').forceUnlock();
    await until(() => losses.some((m) => m.clientId === locks.id), 2_000);
    expect(losses.find((m) => m.clientId === locks.id)).toEqual({ name: 'dog', owner: lease.owner, clientId: locks.id, reason: 'deleted' });
  });
});
