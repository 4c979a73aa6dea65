import { setTimeout as sleep } from 'node:timers/promises';
import type { Locker } from '../adapters/adapter.js';
import { rlockFair } from '../adapters/rlock-fair.js';
import { median, shuffled } from '../stats.js';
import { HOLD_MS, measureHandoffs, pingPongSizes } from './ping-pong.js';
import {
  acquireUntil,
  failedRow,
  libraryRow,
  num,
  pastDeadline,
  rlockValues,
  withLibrary,
  type Row,
  type Scenario,
} from './scenario.js';

const SIZES = { full: { rounds: 10, capMs: 120_000 }, quick: { rounds: 3, capMs: 30_000 } };
const WAITERS = 10;
const ENQUEUE_SPACING_MS = 5;
/**
 * How long each waiter holds its turn, ms. Longer than the spacing, so the waiters pile up: with
 * shorter turns, a library polling at a fixed period (no jitter) serves them in order only
 * because each waiter's polls keep the 5 ms offset it asked at.
 */
const TURN_HOLD_MS = 2 * ENQUEUE_SPACING_MS;
const WARMUP_ROUNDS = 1;

/** Waiters that did not get the lock in the position they asked in (`order`: waiter indexes as they got it). */
function outOfOrder(order: readonly number[]): number {
  return order.filter((waiter, position) => waiter !== position).length;
}

/**
 * One ordering round: `holder` takes `key`; while it holds, the waiters ask one after the other,
 * ENQUEUE_SPACING_MS apart; then the holder lets go, and each waiter, once it has the lock,
 * holds TURN_HOLD_MS and lets go. Resolves with the waiters' indexes in the order they got the lock.
 */
async function orderingRound(
  holder: Locker,
  waiters: readonly Locker[],
  key: string,
  deadline: number,
  onGiveUp: () => void,
): Promise<number[]> {
  const order: number[] = [];
  const release = await acquireUntil(holder, key, deadline, onGiveUp);
  const turns: Promise<void>[] = [];
  for (const [index, waiter] of waiters.entries()) {
    turns.push(
      (async () => {
        const mine = await acquireUntil(waiter, key, deadline, onGiveUp);
        order.push(index);
        await sleep(TURN_HOLD_MS);
        await mine();
      })(),
    );
    await sleep(ENQUEUE_SPACING_MS);
  }
  // Settled, not raced: a turn that fails while the others still queue must not go unhandled.
  const settled = Promise.allSettled(turns);
  await release();
  for (const turn of await settled) if (turn.status === 'rejected') throw turn.reason;
  return order;
}

/**
 * 5. The fair lock next to rlock's plain lock and the peers: scenario 3's ping-pong handoff, then
 * an ordering check: ten waiters ask 5 ms apart while the lock is held; how many of them get it
 * out of the order they asked in?
 */
export const fairLock: Scenario = {
  id: '5',
  title: 'Fair lock: handoff and order',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const handoffSize = pingPongSizes(context.quick);
    const rows = new Map<string, Row>();
    const gapsById: Record<string, number[]> = {};
    const ordersById: Record<string, number[][]> = {};
    for (const adapter of shuffled(context.adapters, context.random)) {
      try {
        const values = await withLibrary(context, adapter, async (open) => {
          const lockers: Locker[] = [];
          for (let i = 0; i <= WAITERS; i += 1) lockers.push(await open());
          const handoff = await measureHandoffs([lockers[0]!, lockers[1]!], `s5:${adapter.id}`, context.quick);
          gapsById[adapter.id] = handoff.gaps;
          const key = `s5:${adapter.id}:order`;
          const deadline = performance.now() + size.capMs;
          const orders: number[][] = [];
          let gaveUp = 0;
          for (let round = 0; round < WARMUP_ROUNDS + size.rounds && !pastDeadline(deadline); round += 1) {
            // Which connection holds and which asks first changes every round.
            const [holder, ...waiters] = shuffled(lockers, context.random);
            const order = await orderingRound(holder!, waiters, key, deadline, () => {
              if (round >= WARMUP_ROUNDS) gaveUp += 1;
            });
            if (round >= WARMUP_ROUNDS) orders.push(order);
          }
          ordersById[adapter.id] = orders;
          const counts = orders.map(outOfOrder);
          return {
            ...handoff.values,
            rounds: orders.length,
            outOfOrderP50: median(counts),
            outOfOrderMax: Math.max(...counts),
            outOfOrderTotal: counts.reduce((a, b) => a + b, 0),
            orderGaveUp: gaveUp,
          };
        });
        rows.set(adapter.id, libraryRow(adapter, values));
        context.log(
          `  ${adapter.id}: gap p50 ${values.gapP50.toFixed(3)} ms (${values.ratio.toFixed(1)} × EVALSHA), ` +
            `out of order ${values.outOfOrderTotal} of ${values.rounds * WAITERS} in ${values.rounds} rounds`,
        );
      } catch (error) {
        rows.set(adapter.id, failedRow(adapter, error));
        context.log(`  ${adapter.id} failed: ${String(error)}`);
      }
    }

    const ordered = context.adapters.map((adapter) => rows.get(adapter.id)!);
    const fair = rlockValues(ordered, rlockFair.id);
    const plain = rlockValues(ordered);
    const short = ordered.filter(
      (row) =>
        (typeof row.values.handoffs === 'number' && row.values.handoffs < handoffSize.handoffs) ||
        (typeof row.values.rounds === 'number' && row.values.rounds < size.rounds),
    );
    return {
      id: this.id,
      title: this.title,
      setup:
        `Every library with ${WAITERS + 1} workers, each with its own connection(s). Handoff: scenario 3 on two of ` +
        `them (${handoffSize.handoffs} handoffs, holding ${HOLD_MS} ms while the other is already inside acquire; ` +
        `gap = release resolved → the waiter's acquire resolved; floor = ${handoffSize.floorCalls.toLocaleString('en')} ` +
        `EVALSHA back to back on the first one's connection). Order: ${size.rounds} rounds (after ${WARMUP_ROUNDS} ` +
        `warm-up) on another key, at most ${size.capMs / 1000} s; in each, one worker takes the lock, the other ` +
        `${WAITERS} ask one after the other, ${ENQUEUE_SPACING_MS} ms apart, while it is held; then it lets go and ` +
        `each waiter, once it has the lock, holds ${TURN_HOLD_MS} ms (longer than the spacing, so a library ` +
        'polling at a fixed period cannot keep them in order by the phase of its polls) and lets go. Which ' +
        'worker holds and the order the others ask in are shuffled per round. A waiter is out of order when it gets the lock at another ' +
        'position than it asked in (a random order puts 9 of 10 out of order on average). A call the library ' +
        'gives up on (gave up) asks again at once, keeping its original position for the count.',
      columns: [
        { key: 'outOfOrderP50', header: `out of order of ${WAITERS}, median`, digits: 1 },
        { key: 'outOfOrderMax', header: 'out of order, worst round', digits: 0 },
        { key: 'orderGaveUp', header: 'gave up (order)', digits: 0 },
        { key: 'gapP50', header: 'gap p50 ms', digits: 3 },
        { key: 'gapP90', header: 'gap p90 ms', digits: 3 },
        { key: 'gapP99', header: 'gap p99 ms', digits: 3 },
        { key: 'gapMax', header: 'gap max ms', digits: 3 },
        { key: 'floorP50', header: 'EVALSHA p50 ms', digits: 3 },
        { key: 'ratio', header: 'gap p50 ÷ EVALSHA p50', digits: 1 },
        { key: 'gaveUp', header: 'gave up (handoff)', digits: 0 },
      ],
      rows: ordered,
      headline: { key: 'gapP50', higherIsBetter: false },
      targets: fair
        ? [
            {
              target: 'fair lock: 0 out of order',
              measured: `${String(fair.outOfOrderTotal)} of ${num(fair.rounds) * WAITERS} waiters in ${String(fair.rounds)} rounds`,
              met: fair.outOfOrderTotal === 0,
            },
            {
              target: 'fair lock: handoff gap p50 ≤ 3 × EVALSHA p50',
              measured: `${num(fair.ratio).toFixed(2)} × (${num(fair.gapP50).toFixed(3)} ms)`,
              met: num(fair.ratio) <= 3,
            },
          ]
        : [],
      notes: [
        ...short.map(
          (row) =>
            `${row.label}: stopped at the time budget after ${String(row.values.handoffs)} handoffs and ` +
            `${String(row.values.rounds)} rounds.`,
        ),
        ...(plain?.outOfOrderTotal === 0
          ? [
              'rlock’s plain lock (`getLock`) is not fair, yet came out in order here: a release wakes the client ' +
                'that has waited longest, each waiter here is a client of its own, and nobody else asks. A call ' +
                'that asks while a woken waiter is on its way takes the lock first (see Barging in docs/how-it-works.md).',
            ]
          : []),
      ],
      detail: {
        sizes: { ...size, handoffs: handoffSize },
        holdMs: HOLD_MS,
        turnHoldMs: TURN_HOLD_MS,
        waiters: WAITERS,
        enqueueSpacingMs: ENQUEUE_SPACING_MS,
        gaps: gapsById,
        orders: ordersById,
      },
    };
  },
};
