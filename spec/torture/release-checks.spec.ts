import { describe, expect, it } from 'vitest';
import { Checker, type CountProbe, type HeldProbe } from '../../tools/torture/checker.js';
import type { WorkerEvent } from '../../tools/torture/events.js';

// The torture checks of releases on hand-made event sequences: each flags what it is there for,
// and lets the legitimate case pass.

type Acquired = Extract<WorkerEvent, { type: 'acquired' }>;
type OwnerCount = Extract<WorkerEvent, { type: 'owner-count' }>;

const OWNER = 'client-a:ctx-1';

function acquired(hold: string, t: number, ttl: number, reentry = false): Acquired {
  return { type: 'acquired', t, t0: t - 2, op: 'op-1', hold, kind: 'lock', names: ['lock-0'], mode: 'excl', owner: OWNER, reentry, ttl, watchdog: false };
}

function count(t: number, live: number, final = false, unanswered = 0): OwnerCount {
  return { type: 'owner-count', t, op: 'op-1', client: 0, acl: false, owner: OWNER, kind: 'lock', names: ['lock-0'], live, final, unanswered };
}

async function check(
  events: WorkerEvent[],
  probes: { held?: HeldProbe; count?: CountProbe } = {},
): Promise<Checker> {
  const checker = new Checker(probes.held ?? (() => Promise.resolve(false)), [], probes.count ?? (() => Promise.resolve(0)));
  for (const event of events) checker.add({ worker: 0, incarnation: 0, event });
  await checker.drainProbes();
  checker.finish([]);
  return checker;
}

const kinds = (checker: Checker): string[] => checker.violations.map((v) => v.kind);

describe('torture release checks', () => {
  // Long past: the stuck probes are due at once; the leases below are long enough to stand now.
  const base = performance.timeOrigin + performance.now() - 60_000;
  const notHeld = 'LockNotHeldError: lock "lock-0" is not held by the current owner';

  describe('not-held', () => {
    const released = (t0: number, t: number, ok: boolean, aborted = false): WorkerEvent => ({
      type: 'released',
      t,
      t0,
      hold: 'b',
      ok,
      error: ok ? undefined : 'LockRedisError: release of lock "lock-0" got no answer in time',
      aborted,
    });

    it('flags a release called again that answers "not held" while the lease stands', async () => {
      const checker = await check([
        acquired('a', base, 10_000),
        acquired('b', base + 5, 10_000, true),
        { type: 'release', t: base + 100, hold: 'b' },
        released(base + 100, base + 5_100, false),
        { type: 'retried', t: base + 5_200, t0: base + 5_150, hold: 'b', n: 2, ok: false, error: notHeld, aborted: false },
      ]);
      expect(kinds(checker)).toEqual(['not-held']);
    });

    it('lets it pass once the lease could have ended, or when the Lease was told it lost the lock', async () => {
      const late = await check([
        acquired('a', base, 1_000),
        acquired('b', base + 5, 1_000, true),
        { type: 'release', t: base + 100, hold: 'b' },
        released(base + 100, base + 950, false),
        { type: 'retried', t: base + 1_200, t0: base + 1_150, hold: 'b', n: 2, ok: false, error: notHeld, aborted: false },
      ]);
      expect(kinds(late)).toEqual([]);
      const lost = await check([
        acquired('a', base, 10_000),
        acquired('b', base + 5, 10_000, true),
        { type: 'release', t: base + 100, hold: 'b' },
        released(base + 100, base + 5_100, false, true),
        { type: 'retried', t: base + 5_200, t0: base + 5_150, hold: 'b', n: 2, ok: false, error: notHeld, aborted: true },
      ]);
      expect(kinds(lost)).toEqual([]);
    });
  });

  describe('owner-count', () => {
    it('flags Redis counting fewer holds than the Leases live', async () => {
      const events = [acquired('a', base, 10_000), acquired('b', base + 5, 10_000, true), { type: 'release', t: base + 100, hold: 'b' } as const, count(base + 110, 1)];
      expect(kinds(await check(events, { count: () => Promise.resolve(0) }))).toEqual(['owner-count']);
      expect(kinds(await check(events, { count: () => Promise.resolve(1) }))).toEqual([]);
    });

    it('does not judge a count a later release of the owner may have overtaken', async () => {
      const checker = await check(
        [acquired('a', base, 10_000), acquired('b', base + 5, 10_000, true), count(base + 110, 2), { type: 'release', t: base + 111, hold: 'b' }],
        { count: () => Promise.resolve(1) },
      );
      expect(kinds(checker)).toEqual([]);
    });

    it('flags an owner Redis still holds once every Lease of its operation was released', async () => {
      const events: WorkerEvent[] = [
        acquired('a', base, 10_000),
        { type: 'release', t: base + 100, hold: 'a' },
        { type: 'released', t: base + 101, t0: base + 100, hold: 'a', ok: true, aborted: false },
        count(base + 102, 0, true),
      ];
      // Held when the owner check asks at once; free by the time the stuck probe asks.
      let asked = 0;
      const held: HeldProbe = () => Promise.resolve((asked += 1) === 1 ? 'server main has …' : false);
      expect(kinds(await check(events, { held }))).toEqual(['owner-count']);
      expect(kinds(await check(events))).toEqual([]);
    });

    it('when releases were left to background retries, asks at a quiet moment within the lease', async () => {
      // Recent enough that the 4 s lease still stands, long enough ago that 2 s were quiet.
      const t = performance.timeOrigin + performance.now() - 2_500;
      const events: WorkerEvent[] = [
        acquired('a', t, 4_000),
        { type: 'release', t: t + 100, hold: 'a' },
        { type: 'released', t: t + 200, t0: t + 100, hold: 'a', ok: false, error: 'LockRedisError: …', aborted: false },
        count(t + 300, 0, true, 1),
      ];
      // Held when the owner check asks (the stuck probe, lease + 1 s after the release, finds it free).
      let asked = 0;
      const held: HeldProbe = () => Promise.resolve((asked += 1) === 1 ? 'server main has …' : false);
      const checker = await check(events, { held });
      expect(checker.violations.map((v) => v.message)).toEqual([expect.stringContaining("left to rlock's background retries")]);
    });
  });

  it('hand-off-query: flags a handing-off context told it still holds the lock', async () => {
    const query = (held: boolean, holdCount: number): WorkerEvent => ({ type: 'query', t: base + 10, hold: 'a', owner: OWNER, adopted: false, held, count: holdCount });
    expect(kinds(await check([acquired('a', base, 10_000), query(true, 1)]))).toEqual(['hand-off-query']);
    expect(kinds(await check([acquired('a', base, 10_000), query(false, 0)]))).toEqual([]);
  });
});
