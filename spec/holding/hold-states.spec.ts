import { describe, expect, it } from 'vitest';
import { HOLD_TRANSITIONS, IllegalHoldTransition, type HoldState } from '../../lib/holding/hold.js';
import { Hold, Holds, type Acquisition } from '../../lib/holding/holds.js';
import { LockLostError } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';

// The Hold's one state and the moves its table allows, driven through Holds with no Redis:
// every path the release, the clock and the acquisitions take, and the moves nobody may make.

const lost: string[] = [];
const newHolds = (): Holds => new Holds({ lost: (_hold, reason) => lost.push(reason) }, 'spec');

function acquisition(ttlMs: number, more: Partial<Acquisition> = {}): Acquisition {
  const target = { name: 'states', script: 'lock', keys: ['k'], holder: 'o' } as const;
  return { kind: 'lock', lockId: 'lock\u0000k', owner: 'o', target, unscoped: false, sentAt: performance.now(), ttlMs, watchdog: false, ...more };
}

describe('Hold states', () => {
  it('the table: a new hold is held; ended and let-go lead nowhere; every state is reachable', () => {
    const holds = newHolds();
    expect(holds.acquired(acquisition(60_000)).state).toBe('held');
    expect(HOLD_TRANSITIONS.ended).toEqual([]);
    expect(HOLD_TRANSITIONS['let-go']).toEqual([]);
    const reached = new Set<HoldState>(['held', ...Object.values(HOLD_TRANSITIONS).flat()]);
    expect([...reached].sort()).toEqual(Object.keys(HOLD_TRANSITIONS).sort());
  });

  it('a last release makes it ending (no longer watched); a re-entry makes it held again', () => {
    const holds = newHolds();
    const hold = holds.acquired(acquisition(60_000, { watchdog: true }));
    expect([...holds.watched()]).toEqual([hold]);
    holds.lastReleaseSent(hold);
    expect(hold.state).toBe('ending');
    expect([...holds.watched()]).toEqual([]);
    expect(holds.acquired(acquisition(60_000, { watchdog: true }))).toBe(hold);
    expect(hold.state).toBe('held');
    expect(hold.count).toBe(2);
  });

  it('a background answer of 0 holds makes it released; the next acquisition starts a new hold and ends the old', () => {
    const holds = newHolds();
    const hold = holds.acquired(acquisition(60_000));
    holds.lastReleaseSent(hold);
    holds.answered(hold, 0);
    expect(hold.state).toBe('released');
    expect(holds.isCurrent(hold)).toBe(true);
    const next = holds.acquired(acquisition(60_000));
    expect(next).not.toBe(hold);
    expect(hold.state).toBe('ended');
    expect(next.state).toBe('held');
  });

  it('the clock ends a hold it let go of as let-go, one it did not as ended', async () => {
    const holds = newHolds();
    const letGo: number[] = [];
    const watched = holds.acquired(acquisition(60, { owner: 'a', watchdog: true, letGo: (count) => letGo.push(count) }));
    const plain = holds.acquired(acquisition(60, { owner: 'b', watchdog: true }));
    await sleep(150);
    expect(watched.state).toBe('let-go');
    expect(watched.letGoSent).toBe(true);
    expect(letGo).toEqual([1]);
    expect(plain.state).toBe('ended');
    expect(plain.letGoSent).toBe(false);
    expect(lost).toContain('expired');
  });

  it('an illegal move is an internal error, and changes nothing', () => {
    const holds = newHolds();
    const hold = holds.acquired(acquisition(60_000));
    holds.lose(hold, 'deleted', new LockLostError('gone', 'deleted'));
    expect(hold.state).toBe('ended');
    expect(() => holds.lastReleaseSent(hold)).toThrow(IllegalHoldTransition);
    expect(() => Hold.move(hold, 'held')).toThrow(/cannot go from ended to held/);
    expect(hold.state).toBe('ended');
    const released = holds.acquired(acquisition(60_000, { owner: 'p' }));
    holds.answered(released, 0);
    expect(() => Hold.move(released, 'held')).toThrow(IllegalHoldTransition);
    expect(released.state).toBe('released');
  });
});
