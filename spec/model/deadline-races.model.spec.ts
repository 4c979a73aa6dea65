import { setImmediate as turn } from 'node:timers/promises';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pendingRaces, raceDeadline, TIMED_OUT } from '../../lib/waiting/wait.js';

/*
 * A model-based search of the deadline races every lock call runs (lib/waiting/wait.ts): one shared
 * timer for every race, races kept in an array and marked when settled, compacted now and then.
 * Random sequences of races started (deadline or none, with an abort signal or not), answers and
 * failures of the raced calls, aborts and the passing of (fake) time. After every step each race's
 * outcome is checked against a reference model:
 *
 *   outcome   the call's answer when it came before the deadline and the abort, TIMED_OUT when the
 *             deadline came first, the abort's reason when the abort came first, the call's error
 *             when it failed first
 *   gave-up   `gaveUp` is called once when the deadline or the abort came first, never otherwise
 *   in-time   an outcome is there as soon as what decides it happened, not later
 *   counted   the races waiting for a deadline are exactly the model's undecided ones with a deadline
 *
 * Deadlines are multiples of 10 ms and time moves in steps of 5 ms, so that no answer comes within
 * the 1 ms a timer may fire early. RLOCK_MODEL_SEED replays a search; RLOCK_MODEL_RUNS sets the runs.
 */

type Event =
  | { readonly type: 'start'; readonly in: number | undefined; readonly signal: boolean }
  | { readonly type: 'answer'; readonly race: number; readonly ok: boolean }
  | { readonly type: 'abort'; readonly race: number }
  | { readonly type: 'advance'; readonly ms: number };

type Outcome = { readonly kind: 'value'; readonly value: number } | { readonly kind: 'timed-out' } | { readonly kind: 'aborted' } | { readonly kind: 'failed' };

interface Running {
  readonly deadline: number;
  readonly controller: AbortController | undefined;
  readonly answer: (value: number) => void;
  readonly fail: (error: Error) => void;
  /** What the model says, once decided. */
  expected: Outcome | undefined;
  /** What the race settled with. */
  seen: Outcome | undefined;
  gaveUp: number;
}

// Weighted towards starts and answers; the array's compaction (past 64 settled races) has an example of its own below.
const event: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ type: fc.constant('start' as const), in: fc.option(fc.integer({ min: 1, max: 20 }).map((tens) => tens * 10), { nil: undefined }), signal: fc.boolean() }),
  },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('answer' as const), race: fc.nat(), ok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('abort' as const), race: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 12 }).map((fives) => fives * 5) }) },
);

const REASON = new Error('aborted by the spec');
const FAILURE = new Error('the call failed');

describe('deadline races (wait.ts), against a model', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('each race ends once, with what came first, and none is left waiting', async () => {
    const seed = process.env.RLOCK_MODEL_SEED ? Number(process.env.RLOCK_MODEL_SEED) : undefined;
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 80, size: 'max' }), async (events) => {
        const races: Running[] = [];
        const undecided = (race: Running): boolean => race.expected === undefined;
        const check = (): void => {
          for (const [at, race] of races.entries()) {
            expect(race.seen, `outcome of race ${at}`).toEqual(race.expected);
            const gaveUp = race.expected?.kind === 'timed-out' || race.expected?.kind === 'aborted' ? 1 : 0;
            expect(race.gaveUp, `gaveUp of race ${at}`).toBe(gaveUp);
          }
          expect(pendingRaces(), 'races waiting for a deadline').toBe(races.filter((race) => undecided(race) && race.deadline !== Infinity).length);
        };
        try {
        for (const step of events) {
          const now = performance.now();
          if (step.type === 'start') {
            let answer!: (value: number) => void;
            let fail!: (error: Error) => void;
            const call = new Promise<number>((resolve, reject) => {
              answer = resolve;
              fail = reject;
            });
            const controller = step.signal ? new AbortController() : undefined;
            const deadline = step.in === undefined ? Infinity : now + step.in;
            const race: Running = { deadline, controller, answer, fail, expected: undefined, seen: undefined, gaveUp: 0 };
            races.push(race);
            raceDeadline(call, deadline, controller?.signal, () => (race.gaveUp += 1)).then(
              (value) => (race.seen = value === TIMED_OUT ? { kind: 'timed-out' } : { kind: 'value', value }),
              (error: unknown) => (race.seen = error === REASON ? { kind: 'aborted' } : { kind: 'failed' }),
            );
          } else if (step.type === 'answer' || step.type === 'abort') {
            if (races.length === 0) continue;
            const race = races[step.race % races.length]!;
            if (step.type === 'abort') {
              if (!race.controller || race.controller.signal.aborted) continue;
              race.controller.abort(REASON);
              if (undecided(race)) race.expected = { kind: 'aborted' };
            } else {
              const value = step.race;
              if (step.ok) race.answer(value);
              else race.fail(FAILURE);
              if (undecided(race)) race.expected = step.ok ? { kind: 'value', value } : { kind: 'failed' };
            }
          } else {
            const until = now + step.ms;
            // The model's deadlines passed in this step, in order: each decides its undecided race.
            for (const race of races) if (undecided(race) && race.deadline <= until) race.expected = { kind: 'timed-out' };
            await vi.advanceTimersByTimeAsync(step.ms);
          }
          await turn();
          check();
        }
        // Everything answered at the end: nothing stays waiting.
        for (const race of races) {
          race.answer(0);
          if (undecided(race)) race.expected = { kind: 'value', value: 0 };
        }
        await turn();
        check();
        expect(pendingRaces()).toBe(0);
        } finally {
          // A failed run leaves no race waiting for the next one (shrinking reruns).
          for (const race of races) race.answer(0);
          await turn();
        }
      }),
      { numRuns: Number(process.env.RLOCK_MODEL_RUNS ?? 100), seed },
    );
  });

  it('races settled by hundreds between firings of the timer keep the pending ones on time', async () => {
    const answers: ((value: number) => void)[] = [];
    const outcomes: unknown[] = [];
    // Each tenth race left waiting, the others answered soon after they start: settled races pile
    // up between starts, so the array compacts several times while the waiting ones stay in it.
    for (let at = 0; at < 500; at += 1) {
      const call = new Promise<number>((resolve) => answers.push(resolve));
      void raceDeadline(call, performance.now() + 1_000).then((value) => (outcomes[at] = value));
      if (at % 10 !== 0) answers[at]!(at);
      if (at % 5 === 4) await turn();
    }
    await turn();
    expect(pendingRaces()).toBe(50);
    await vi.advanceTimersByTimeAsync(999);
    await turn();
    expect(outcomes.filter((outcome) => outcome === TIMED_OUT)).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await turn();
    for (let at = 0; at < 500; at += 1) expect(outcomes[at]).toBe(at % 10 === 0 ? TIMED_OUT : at);
    expect(pendingRaces()).toBe(0);
  });
});
