import { describe, expect, it } from 'vitest';
import { Checker } from '../../tools/torture/checker.js';
import type { WorkerEvent } from '../../tools/torture/events.js';

// The torture checker on hand-made event sequences: where a hold begins and ends as its holder
// believed it, when the worker dies in the middle.

type Acquired = Extract<WorkerEvent, { type: 'acquired' }>;

function acquired(hold: string, owner: string, t: number): Acquired {
  return {
    type: 'acquired',
    t,
    t0: t - 5,
    op: hold,
    hold,
    kind: 'multi',
    names: ['multi-0', 'multi-1'],
    mode: 'excl',
    owner,
    reentry: false,
    ttl: 400,
    watchdog: false,
  };
}

async function check(steps: ((checker: Checker) => void)[]): Promise<Checker> {
  const checker = new Checker(() => Promise.resolve(false), []);
  for (const step of steps) step(checker);
  // Every hold ended long ago: the stuck probes are due at once.
  await checker.drainProbes();
  checker.finish([]);
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
});
