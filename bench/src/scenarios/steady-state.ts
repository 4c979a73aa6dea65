import { setTimeout as sleep } from 'node:timers/promises';
import type { Locker } from '../adapters/adapter.js';
import { subscriptionCount } from '../server-stats.js';
import { shuffled } from '../stats.js';
import {
  failedRow,
  LEASE_MS,
  libraryRow,
  num,
  pastDeadline,
  rlockValues,
  WAIT_MS,
  withLibrary,
  type Row,
  type Scenario,
} from './scenario.js';

const SIZES = {
  full: { tasks: 20, cycles: 100_000, warmup: 2_000, capMs: 90_000 },
  quick: { tasks: 20, cycles: 5_000, warmup: 500, capMs: 20_000 },
};
/** Longer than rlock's 2 s subscription linger: a subscription left after this one leaked. */
const SETTLE_MS = 2_500;

/** `tasks` tasks cycle on one key until `cycles` acquisitions; resolves with those done and given up. */
async function churn(
  locker: Locker,
  key: string,
  tasks: number,
  cycles: number,
  deadline: number,
): Promise<{ done: number; gaveUp: number }> {
  let tickets = cycles;
  let done = 0;
  let gaveUp = 0;
  await Promise.all(
    Array.from({ length: tasks }, async () => {
      while (tickets > 0 && !pastDeadline(deadline)) {
        tickets -= 1;
        let release = await locker.acquire(key, LEASE_MS, WAIT_MS);
        while (!release && !pastDeadline(deadline)) {
          gaveUp += 1;
          release = await locker.acquire(key, LEASE_MS, WAIT_MS);
        }
        if (!release) return;
        await release();
        done += 1;
      }
    }),
  );
  return { done, gaveUp };
}

/** How long the heap is left to settle before each pair of full collections, ms. */
const HEAP_SETTLE_MS = 100;

/**
 * Used heap after full collections (needs `node --expose-gc`), bytes. The collections run after
 * a few turns of the event loop, twice: objects freed by a finalizer (node-redis times every
 * command with `AbortSignal.timeout`, whose timer goes only once a finalizer ran on a later turn)
 * would otherwise count as held, several MB at a time, up or down.
 */
async function settledHeap(): Promise<number> {
  if (typeof globalThis.gc !== 'function') return Number.NaN;
  for (let round = 0; round < 2; round += 1) {
    await sleep(HEAP_SETTLE_MS);
    globalThis.gc();
    globalThis.gc();
  }
  return process.memoryUsage().heapUsed;
}

/**
 * 6. Twenty tasks of one process churn on one key for a long run: does anything pile up?
 * Heap (after full GC) and server-side subscriptions at the start and the end.
 */
export const steadyState: Scenario = {
  id: '6',
  title: 'Steady state',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const rows = new Map<string, Row>();
    for (const adapter of shuffled(context.adapters, context.random)) {
      try {
        const values = await withLibrary(context, adapter, async (open) => {
          const locker = await open();
          const key = `s6:${adapter.id}`;
          await churn(locker, key, size.tasks, size.warmup, performance.now() + size.capMs);
          const heapStart = await settledHeap();
          const subsStart = await subscriptionCount(context.admin);
          const start = performance.now();
          const { done, gaveUp } = await churn(locker, key, size.tasks, size.cycles, start + size.capMs);
          const elapsedMs = performance.now() - start;
          const heapEnd = await settledHeap();
          const subsEnd = await subscriptionCount(context.admin);
          // Only a subscription still there can go away by itself.
          if (subsEnd > 0) await sleep(SETTLE_MS);
          const subsSettled = subsEnd > 0 ? await subscriptionCount(context.admin) : subsEnd;
          return {
            cycles: done,
            cyclesPerSec: (done / elapsedMs) * 1000,
            gaveUp,
            heapStartMb: heapStart / 2 ** 20,
            heapEndMb: heapEnd / 2 ** 20,
            heapGrowthKb: (heapEnd - heapStart) / 1024,
            subsStart,
            subsEnd,
            subsSettled,
          };
        });
        rows.set(adapter.id, libraryRow(adapter, values));
        context.log(
          `  ${adapter.id}: ${values.cycles} cycles at ${values.cyclesPerSec.toFixed(0)}/s, heap ` +
            `${values.heapGrowthKb.toFixed(0)} KB, subscriptions ${values.subsStart} → ${values.subsEnd} → ${values.subsSettled}`,
        );
      } catch (error) {
        rows.set(adapter.id, failedRow(adapter, error));
        context.log(`  ${adapter.id} failed: ${String(error)}`);
      }
    }

    const ordered = context.adapters.map((adapter) => rows.get(adapter.id)!);
    const mine = rlockValues(ordered);
    const short = ordered.filter((row) => typeof row.values.cycles === 'number' && row.values.cycles < size.cycles);
    return {
      id: this.id,
      title: this.title,
      setup:
        `${size.tasks} tasks of one process on one connection contend for one key, lock+unlock with no hold, ` +
        `${size.cycles.toLocaleString('en')} cycles per library (after ${size.warmup.toLocaleString('en')} warm-up), ` +
        `at most ${size.capMs / 1000} s. Heap: used heap after two full GCs, at the start and the end. ` +
        `Subscriptions: channels + patterns on the server at the start, at the end, and ${SETTLE_MS / 1000} s later.`,
      columns: [
        { key: 'cycles', header: 'cycles', digits: 0 },
        { key: 'cyclesPerSec', header: 'cycles/s', digits: 0 },
        { key: 'gaveUp', header: 'gave up', digits: 0 },
        { key: 'heapStartMb', header: 'heap start MB', digits: 2 },
        { key: 'heapEndMb', header: 'heap end MB', digits: 2 },
        { key: 'heapGrowthKb', header: 'heap growth KB', digits: 0 },
        { key: 'subsStart', header: 'subs start', digits: 0 },
        { key: 'subsEnd', header: 'subs end', digits: 0 },
        { key: 'subsSettled', header: `subs +${SETTLE_MS / 1000} s`, digits: 0 },
      ],
      rows: ordered,
      headline: { key: 'cyclesPerSec', higherIsBetter: true },
      targets: mine
        ? [
            {
              // A few hundred KB is allocator and JIT noise; a leak of even 10 bytes per cycle shows as ~1 MB.
              target: 'no heap growth (≤ 512 KB over the run)',
              measured: `${num(mine.heapGrowthKb).toFixed(0)} KB`,
              met: num(mine.heapGrowthKb) <= 512,
            },
            {
              target: 'no subscription growth',
              measured: `${String(mine.subsStart)} → ${String(mine.subsEnd)} (→ ${String(mine.subsSettled)} settled)`,
              met: num(mine.subsEnd) <= num(mine.subsStart) && num(mine.subsSettled) <= num(mine.subsStart),
            },
          ]
        : [],
      notes: [
        ...short.map((row) => `${row.label}: stopped at the time budget after ${String(row.values.cycles)} cycles.`),
        ...(typeof globalThis.gc === 'function' ? [] : ['Heap not measured: run node with --expose-gc.']),
      ],
      detail: { sizes: size },
    };
  },
};
