import { describe, expect, it } from 'vitest';
import { Checker, type HeldProbe } from '../../tools/torture/checker.js';
import type { WorkerEvent } from '../../tools/torture/events.js';
import type { FaultRecord } from '../../tools/torture/faults.js';

// The torture checker on hand-made event sequences: where a hold begins and ends as its holder
// believed it, when the worker dies in the middle.

type Acquired = Extract<WorkerEvent, { type: 'acquired' }>;

function acquired(hold: string, owner: string, t: number, kind: 'multi' | 'lock' = 'multi'): Acquired {
  return {
    type: 'acquired',
    t,
    t0: t - 5,
    op: hold,
    hold,
    kind,
    names: kind === 'multi' ? ['multi-0', 'multi-1'] : ['lock-0'],
    mode: 'excl',
    owner,
    reentry: false,
    ttl: 400,
    watchdog: false,
  };
}

async function check(steps: ((checker: Checker) => void)[], probe: HeldProbe = () => Promise.resolve(false), log: FaultRecord[] = []): Promise<Checker> {
  const checker = new Checker(probe, log);
  for (const step of steps) step(checker);
  // Every hold ended long ago: the stuck probes are due at once.
  await checker.drainProbes();
  checker.finish(log);
  return checker;
}

describe('torture checker', () => {
  // Long past, so that the stuck probes (lease + margin after the end) are due at once.
  const base = performance.timeOrigin + performance.now() - 60_000;

  it('ends a hold when its release is called, even if the worker is killed before the answer', async () => {
    const checker = await check([
      (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', base) }),
      (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'release', t: base + 100, hold: 'a' } }),
      // The release ran in Redis; another worker takes the lock before the first hears back…
      (c) => c.add({ worker: 1, incarnation: 0, event: acquired('b', 'owner-b', base + 110) }),
      // … and the first is killed before its answer came.
      (c) => c.workerGone(0, 0, base + 112, 'killed'),
      (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'release', t: base + 200, hold: 'b' } }),
      (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'released', t: base + 201, t0: base + 200, hold: 'b', ok: true } }),
    ]);
    expect(checker.violations).toEqual([]);
    expect(checker.stats.unansweredReleases).toBe(1);
    expect(checker.stats.acquiredDuringUnanswered).toBe(1);
  });

  it('still finds two owners holding at once when the first never called release', async () => {
    const checker = await check([
      (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', base) }),
      (c) => c.add({ worker: 1, incarnation: 0, event: acquired('b', 'owner-b', base + 110) }),
      (c) => c.workerGone(0, 0, base + 112, 'killed'),
      (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'release', t: base + 200, hold: 'b' } }),
    ]);
    expect(checker.violations.map((v) => v.kind)).toEqual(['exclusion', 'exclusion']);
    expect(checker.violations[0]!.message).toContain('overlap by 2.0 ms');
    expect(checker.stats.unansweredReleases).toBe(0);
  });

  describe('a lock still held after its owner stopped holding it', () => {
    const clock = (): number => performance.timeOrigin + performance.now();
    // Redis answers "held" until `until`: the lease a call of the owner set.
    const heldUntil = (until: number): HeldProbe => () => Promise.resolve(clock() < until ? 'held' : false);

    // The hold (lease 400 ms) was lost 3 s ago; a re-entry asked 2 s ago with a lease of 2 500 ms
    // ran in Redis (taking the lock afresh), but its worker was killed before the answer came.
    const lostThenReentered = (reentryAttempt: boolean): ((checker: Checker) => void)[] => {
      const now = clock();
      return [
        (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', now - 3_400, 'lock') }),
        (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'lost', t: now - 3_000, hold: 'a', reason: 'expired' } }),
        ...(reentryAttempt ? [(c: Checker) => c.add({ worker: 0, incarnation: 0, event: { type: 'attempt', t: now - 2_000, names: ['lock-0'], owner: 'owner-a', ttl: 2_500 } })] : []),
        (c) => c.workerGone(0, 0, now - 1_990, 'killed'),
      ];
    };

    it('is stuck when no call of its owner asked for a lease that long', async () => {
      const checker = await check(lostThenReentered(false), heldUntil(clock() + 500));
      expect(checker.violations.map((v) => v.kind)).toEqual(['stuck']);
    });

    it('is not stuck while the lease of a re-entry its worker never heard back from lasts', async () => {
      const until = clock() + 500;
      const checker = await check(lostThenReentered(true), heldUntil(until));
      expect(checker.violations).toEqual([]);
      expect(clock()).toBeGreaterThan(until);
    });
  });

  describe('fencing tokens, one hold after another', () => {
    const fenced = (hold: string, owner: string, t: number, token: number, reentry: boolean): Acquired => ({
      ...acquired(hold, owner, t, 'lock'),
      kind: 'fenced',
      names: ['fenced-0'],
      reentry,
      token,
    });
    // An outer hold lost (its maxHoldTime) while re-entries of its owner were out: answered after
    // the loss, they carry on the owner's hold in Redis, with its token.
    const lostOuterThen = (second: Acquired): ((checker: Checker) => void)[] => [
      (c) => c.add({ worker: 0, incarnation: 0, event: fenced('a', 'owner-a', base, 8, false) }),
      (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'lost', t: base + 100, hold: 'a', reason: 'max-hold-time' } }),
      (c) => c.add({ worker: 0, incarnation: 0, event: fenced('r1', 'owner-a', base + 120, 8, true) }),
      (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'release', t: base + 130, hold: 'r1' } }),
      (c) => c.add({ worker: 1, incarnation: 0, event: second }),
      (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'release', t: base + 300, hold: second.hold } }),
    ];

    it("lets one owner's holds back to back share a token", async () => {
      const checker = await check(lostOuterThen(fenced('r2', 'owner-a', base + 125, 8, true)));
      expect(checker.violations).toEqual([]);
    });

    it("finds another owner's hold with a token not above the one before", async () => {
      const checker = await check(lostOuterThen(fenced('b', 'owner-b', base + 200, 8, false)));
      expect(checker.violations.map((v) => v.kind)).toEqual(['token-order']);
    });
  });

  describe('a stall of the event loop (a renewal thread renews some holds meanwhile)', () => {
    const stall = (from: number, to: number, guarded: string[]): ((c: Checker) => void) => (c) => {
      const event = { type: 'stall', t0: base + from, client: 0, hold: 'a', protected: guarded.map((hold) => ({ hold, client: 0, acl: false })) } as const;
      c.add({ worker: 0, incarnation: 0, event: { ...event, phase: 'begin', t: base + from } });
      c.add({ worker: 0, incarnation: 0, event: { ...event, phase: 'end', t: base + to } });
    };
    // Hold a (worker 0) through a stall of 100–2100 ms, released just after; b (worker 1) holds the lock meanwhile.
    const rivalDuringStall = (guarded: string[]): ((c: Checker) => void)[] => [
      (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', base, 'lock') }),
      stall(100, 2_100, guarded),
      (c) => c.add({ worker: 1, incarnation: 0, event: acquired('b', 'owner-b', base + 1_000, 'lock') }),
      (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'release', t: base + 1_200, hold: 'b' } }),
      (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'release', t: base + 2_200, hold: 'a' } }),
    ];

    it('judges a hold a renewal thread renewed through it in full: a rival meanwhile is an overlap', async () => {
      const checker = await check(rivalDuringStall(['a']));
      expect(checker.violations.map((v) => v.kind)).toEqual(['exclusion']);
      expect(checker.stallStats).toMatchObject({ stalls: 1, guarded: 1, judged: 1, kept: 1 });
    });

    it('ends any other hold of the worker where the stall began, as a freeze does', async () => {
      const checker = await check(rivalDuringStall([]));
      expect(checker.violations).toEqual([]);
      expect(checker.stats.cutByStall).toBe(1);
    });

    it("judges a guarded hold as the others when a fault on its client's way to Redis may have cut the thread's renewals", async () => {
      const log: FaultRecord[] = [
        { fault: { type: 'blackhole-short', at: 0, duration: 300, proxies: [{ worker: 0, client: 0, server: 'main' }], drop: false }, start: base + 500, end: base + 800 },
      ];
      const checker = await check(rivalDuringStall(['a']), undefined, log);
      expect(checker.violations).toEqual([]);
      expect(checker.stallStats).toMatchObject({ guarded: 1, disturbed: 1, judged: 0 });
    });

    it('a hold taken between a freeze and a stall that follows within the wake margin ends where the stall began', async () => {
      // Worker 0 frozen 0–1000 ms, running 1000–1200 (it takes hold a at 1100), stalled 1200–4000;
      // a's lease runs out meanwhile, b (worker 1) takes the lock at 2800, a is told at 4010.
      const log: FaultRecord[] = [{ fault: { type: 'sigstop', at: 0, duration: 1_000, worker: 0 }, start: base, end: base + 1_000 }];
      const checker = await check(
        [
          (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', base + 1_100, 'lock') }),
          stall(1_200, 4_000, []),
          (c) => c.add({ worker: 1, incarnation: 0, event: acquired('b', 'owner-b', base + 2_800, 'lock') }),
          (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'release', t: base + 3_000, hold: 'b' } }),
          (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'lost', t: base + 4_010, hold: 'a', reason: 'expired' } }),
        ],
        undefined,
        log,
      );
      expect(checker.violations).toEqual([]);
      // One pause, merged: counted as a freeze.
      expect(checker.stats.cutByFreeze).toBe(1);
    });

    // A stall past maxStall: the thread let the hold go; the holder is told `stalled` on resuming.
    const pastMaxStall = (rivalAt: number): ((c: Checker) => void)[] => [
      (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', base, 'lock') }),
      stall(100, 4_400, ['a']),
      (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'lost', t: base + 4_410, hold: 'a', reason: 'stalled' } }),
      (c) => c.add({ worker: 1, incarnation: 0, event: acquired('b', 'owner-b', base + rivalAt, 'lock') }),
      (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'release', t: base + 4_600, hold: 'b' } }),
    ];

    it('past maxStall: no violation when the holder was told `stalled` before a rival got in', async () => {
      const checker = await check(pastMaxStall(4_450));
      expect(checker.violations).toEqual([]);
      expect(checker.stallStats).toMatchObject({ judged: 1, lostStalled: 1, pastMaxStall: 1 });
    });

    it('past maxStall: told-late when a rival got in before the holder was told', async () => {
      const checker = await check(pastMaxStall(4_300));
      expect(checker.violations.map((v) => v.kind)).toEqual(['told-late']);
    });

    it('ends a stall its worker was killed in at the kill: its holds as in any stall', async () => {
      const checker = await check([
        (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', base, 'lock') }),
        // Hold a's fixed lease runs out during the stall, b takes the lock, and worker 0 is killed still stalled.
        (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'stall', phase: 'begin', t: base + 100, t0: base + 100, client: 0, hold: 'x', protected: [] } }),
        (c) => c.add({ worker: 1, incarnation: 0, event: acquired('b', 'owner-b', base + 1_000, 'lock') }),
        (c) => c.workerGone(0, 0, base + 3_000, 'killed'),
        (c) => c.add({ worker: 1, incarnation: 0, event: { type: 'release', t: base + 3_200, hold: 'b' } }),
      ]);
      expect(checker.violations).toEqual([]);
      expect(checker.stallStats).toMatchObject({ stalls: 1, killed: 1 });
      expect(checker.stats.cutByStall).toBe(1);
    });

    it('finds a hold told `stalled` after a stall far shorter than maxStall', async () => {
      const checker = await check([
        (c) => c.add({ worker: 0, incarnation: 0, event: acquired('a', 'owner-a', base, 'lock') }),
        stall(100, 1_100, ['a']),
        (c) => c.add({ worker: 0, incarnation: 0, event: { type: 'lost', t: base + 1_110, hold: 'a', reason: 'stalled' } }),
      ]);
      expect(checker.violations.map((v) => v.kind)).toEqual(['stalled-early']);
    });
  });
});
