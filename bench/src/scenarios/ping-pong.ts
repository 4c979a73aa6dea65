import { setTimeout as sleep } from 'node:timers/promises';
import type { Locker } from '../adapters/adapter.js';
import { evalshaFloor } from '../floor.js';
import { distribution, shuffled } from '../stats.js';
import { acquireUntil, failedRow, libraryRow, num, pastDeadline, rlockValues, withLibrary, type Row, type Scenario } from './scenario.js';

const SIZES = {
  full: { handoffs: 300, floorCalls: 1_000, idleFloorCalls: 200, capMs: 150_000 },
  quick: { handoffs: 40, floorCalls: 200, idleFloorCalls: 50, capMs: 30_000 },
};
/** How long each holder holds before letting go, ms. */
export const HOLD_MS = 2;
const WARMUP_HANDOFFS = 3;

/** Scenario 3's sizes (scenario 5 runs the same handoff). */
export function pingPongSizes(quick: boolean): (typeof SIZES)['full'] {
  return quick ? SIZES.quick : SIZES.full;
}

/** What one library's ping-pong gave: the row's values and every gap, ms. */
export interface PingPongResult {
  readonly values: {
    handoffs: number;
    gapP50: number;
    gapP90: number;
    gapP99: number;
    gapMax: number;
    floorP50: number;
    ratio: number;
    idleFloorP50: number;
    gaveUp: number;
  };
  readonly gaps: number[];
}

/**
 * Scenario 3's measurement on two workers: the EVALSHA floor on the first one's connection (back
 * to back, and after HOLD_MS idle), then they hand `key` back and forth, the waiter already inside
 * acquire when the holder, after holding HOLD_MS, releases. A gap runs from the release resolving
 * to the waiter's acquire resolving.
 */
export async function measureHandoffs(workers: readonly [Locker, Locker], key: string, quick: boolean): Promise<PingPongResult> {
  const size = pingPongSizes(quick);
  const floor = await evalshaFloor(workers[0].connection, size.floorCalls);
  const idleFloor = await evalshaFloor(workers[0].connection, size.idleFloorCalls, HOLD_MS);
  const deadline = performance.now() + size.capMs;
  const gaps: number[] = [];
  let gaveUp = 0;
  let holder = 0;
  let release = await acquireUntil(workers[0], key, deadline, () => (gaveUp += 1));
  for (let handoff = 0; handoff < WARMUP_HANDOFFS + size.handoffs && !pastDeadline(deadline); handoff += 1) {
    const waiter = 1 - holder;
    const asking = acquireUntil(workers[waiter]!, key, deadline, () => (gaveUp += 1));
    await sleep(HOLD_MS);
    await release();
    const releasedAt = performance.now();
    release = await asking;
    if (handoff >= WARMUP_HANDOFFS) gaps.push(performance.now() - releasedAt);
    holder = waiter;
  }
  await release();
  const gap = distribution(gaps);
  return {
    values: {
      handoffs: gap.count,
      gapP50: gap.p50,
      gapP90: gap.p90,
      gapP99: gap.p99,
      gapMax: gap.max,
      floorP50: floor.p50,
      ratio: gap.p50 / floor.p50,
      idleFloorP50: idleFloor.p50,
      gaveUp,
    },
    gaps,
  };
}

/**
 * 3. Two workers on separate connections hand one key back and forth. The waiter is already
 * inside acquire when the holder, after holding 2 ms, releases; the gap runs from the release
 * resolving to the waiter's acquire resolving.
 */
export const pingPong: Scenario = {
  id: '3',
  title: 'Ping-pong handoff',
  async run(context) {
    const size = pingPongSizes(context.quick);
    const rows = new Map<string, Row>();
    const gapsById: Record<string, number[]> = {};
    for (const adapter of shuffled(context.adapters, context.random)) {
      try {
        const { values, gaps } = await withLibrary(context, adapter, async (open) =>
          measureHandoffs([await open(), await open()], `s3:${adapter.id}`, context.quick),
        );
        gapsById[adapter.id] = gaps;
        rows.set(adapter.id, libraryRow(adapter, values));
        context.log(
          `  ${adapter.id}: gap p50 ${values.gapP50.toFixed(3)} ms, p99 ${values.gapP99.toFixed(3)} ms ` +
            `(${values.handoffs} handoffs)`,
        );
      } catch (error) {
        rows.set(adapter.id, failedRow(adapter, error));
        context.log(`  ${adapter.id} failed: ${String(error)}`);
      }
    }

    const ordered = context.adapters.map((adapter) => rows.get(adapter.id)!);
    const mine = rlockValues(ordered);
    const bestTunedPeerP50 = Math.min(
      ...ordered.filter((row) => row.id.endsWith('-tuned')).map((row) => num(row.values.gapP50)).filter((v) => !Number.isNaN(v)),
    );
    const short = ordered.filter((row) => typeof row.values.handoffs === 'number' && row.values.handoffs < size.handoffs);
    return {
      id: this.id,
      title: this.title,
      setup:
        `Two workers, each with its own connection(s), one key, strictly alternating; the holder holds ${HOLD_MS} ms ` +
        `while the other is already inside acquire. ${size.handoffs} handoffs per library (after ${WARMUP_HANDOFFS} ` +
        `warm-up), at most ${size.capMs / 1000} s each. Gap: release resolved → the waiter's acquire resolved. ` +
        `Floor: ${size.floorCalls.toLocaleString('en')} EVALSHA on the first worker's connection, back to back; ` +
        `also ${size.idleFloorCalls} EVALSHA each after ${HOLD_MS} ms idle, as a handoff comes after a hold ` +
        '(shown for reference: a round trip that has to wake both processes).',
      columns: [
        { key: 'gapP50', header: 'gap p50 ms', digits: 3 },
        { key: 'gapP90', header: 'gap p90 ms', digits: 3 },
        { key: 'gapP99', header: 'gap p99 ms', digits: 3 },
        { key: 'gapMax', header: 'gap max ms', digits: 3 },
        { key: 'floorP50', header: 'EVALSHA p50 ms', digits: 3 },
        { key: 'ratio', header: 'gap p50 ÷ EVALSHA p50', digits: 1 },
        { key: 'idleFloorP50', header: `EVALSHA after ${HOLD_MS} ms idle p50 ms`, digits: 3 },
        { key: 'handoffs', header: 'handoffs', digits: 0 },
        { key: 'gaveUp', header: 'gave up', digits: 0 },
      ],
      rows: ordered,
      headline: { key: 'gapP50', higherIsBetter: false },
      targets: mine
        ? [
            { target: 'gap p50 ≤ 3 × EVALSHA p50', measured: `${num(mine.ratio).toFixed(2)} ×`, met: num(mine.ratio) <= 3 },
            { target: 'gap p99 ≤ 1 ms', measured: `${num(mine.gapP99).toFixed(3)} ms`, met: num(mine.gapP99) <= 1 },
            {
              target: 'gap p50 ≥ 25 × better than the best tuned peer',
              measured: `${(bestTunedPeerP50 / num(mine.gapP50)).toFixed(1)} ×`,
              met: bestTunedPeerP50 / num(mine.gapP50) >= 25,
            },
          ]
        : [],
      notes: short.map((row) => `${row.label}: stopped at the time budget after ${String(row.values.handoffs)} handoffs.`),
      detail: { sizes: size, holdMs: HOLD_MS, gaps: gapsById },
    };
  },
};
