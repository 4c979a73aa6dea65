import { setTimeout as sleep } from 'node:timers/promises';
import type { Locker } from '../adapters/adapter.js';
import { sentBetween } from '../connections.js';
import { evalshaFloor } from '../floor.js';
import { serverSnapshot, serverWork } from '../server-stats.js';
import { distribution, shuffled } from '../stats.js';
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
  full: { workers: 20, acquisitions: 1_500, floorCalls: 1_000, capMs: 150_000 },
  quick: { workers: 20, acquisitions: 200, floorCalls: 200, capMs: 30_000 },
};
const HOLD_MS = 1;
const THINK_MS = 2;
const WARMUP_ACQUISITIONS_PER_WORKER = 2;

interface Outcome {
  waits: number[];
  /** How long each hold really lasted (a 1 ms timer takes longer). */
  holds: number[];
  /** From a holder letting go to the next holder's acquire resolving. */
  idles: number[];
  gaveUp: number;
  violations: number;
  elapsedMs: number;
}

/**
 * Workers ask, hold, release and think until `acquisitions` were taken (each ticket is one
 * acquisition; a call the library gives up on asks again for the same ticket).
 */
async function contend(workers: readonly Locker[], key: string, acquisitions: number, deadline: number): Promise<Outcome> {
  let tickets = acquisitions;
  let holder: number | undefined;
  let freedAt: number | undefined;
  const outcome: Outcome = { waits: [], holds: [], idles: [], gaveUp: 0, violations: 0, elapsedMs: 0 };
  const start = performance.now();
  await Promise.all(
    workers.map(async (locker, worker) => {
      while (tickets > 0 && !pastDeadline(deadline)) {
        tickets -= 1;
        const askedAt = performance.now();
        let release = await locker.acquire(key, LEASE_MS, WAIT_MS);
        while (!release && !pastDeadline(deadline)) {
          outcome.gaveUp += 1;
          release = await locker.acquire(key, LEASE_MS, WAIT_MS);
        }
        if (!release) break;
        const acquiredAt = performance.now();
        outcome.waits.push(acquiredAt - askedAt);
        if (freedAt !== undefined) outcome.idles.push(acquiredAt - freedAt);
        if (holder !== undefined) outcome.violations += 1;
        holder = worker;
        await sleep(HOLD_MS);
        // Cleared before the release is sent: the next holder can only get in after it.
        if (holder === worker) holder = undefined;
        freedAt = performance.now();
        outcome.holds.push(freedAt - acquiredAt);
        await release();
        await sleep(THINK_MS);
      }
    }),
  );
  outcome.elapsedMs = performance.now() - start;
  return outcome;
}

/**
 * 4. Twenty workers, each with its own connection, take turns on one key: hold 1 ms, then 2 ms
 * outside before asking again. Throughput against the ideal (one hold + one round trip per
 * acquisition), waits, and the work per acquisition on both sides of the wire.
 */
export const contended: Scenario = {
  id: '4',
  title: 'Contended, with think time',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const rows = new Map<string, Row>();
    const commands: Record<string, unknown> = {};
    for (const adapter of shuffled(context.adapters, context.random)) {
      try {
        const values = await withLibrary(context, adapter, async (open, connections) => {
          const workers: Locker[] = [];
          for (let i = 0; i < size.workers; i += 1) workers.push(await open());
          const floor = await evalshaFloor(workers[0]!.connection, size.floorCalls);
          const key = `s4:${adapter.id}`;
          const deadline = performance.now() + size.capMs;
          await contend(workers, key, size.workers * WARMUP_ACQUISITIONS_PER_WORKER, deadline);
          const sentBefore = connections.sent();
          const serverBefore = await serverSnapshot(context.admin);
          const outcome = await contend(workers, key, size.acquisitions, deadline);
          const serverAfter = await serverSnapshot(context.admin);
          const sent = sentBetween(sentBefore, connections.sent());
          const work = serverWork(serverBefore, serverAfter, sent);
          const acquired = outcome.waits.length;
          const sentTotal = [...sent.values()].reduce((a, b) => a + b, 0);
          const perSecond = (acquired / outcome.elapsedMs) * 1000;
          const ideal = 1000 / (HOLD_MS + floor.p50);
          const wait = distribution(outcome.waits);
          const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
          commands[adapter.id] = { sent: Object.fromEntries(sent), server: work.calls, serverUsec: work.usecByCommand };
          return {
            perSecond,
            ofIdeal: perSecond / ideal,
            waitP50: wait.p50,
            waitP99: wait.p99,
            waitMax: wait.max,
            holdMean: mean(outcome.holds),
            idleP50: distribution(outcome.idles).p50,
            gaveUp: outcome.gaveUp,
            sentPerAcq: sentTotal / acquired,
            serverCallsPerAcq: work.totalCalls / acquired,
            serverUsecPerAcq: work.usec / acquired,
            cpuUsecPerAcq: (work.cpuSeconds * 1e6) / acquired,
            violations: outcome.violations,
            acquired,
            floorP50: floor.p50,
          };
        });
        rows.set(adapter.id, libraryRow(adapter, values));
        context.log(
          `  ${adapter.id}: ${values.perSecond.toFixed(0)}/s (${values.ofIdeal.toFixed(2)} of ideal), wait p99 ` +
            `${values.waitP99.toFixed(1)} ms, ${values.sentPerAcq.toFixed(1)} sent/acq`,
        );
      } catch (error) {
        rows.set(adapter.id, failedRow(adapter, error));
        context.log(`  ${adapter.id} failed: ${String(error)}`);
      }
    }

    const ordered = context.adapters.map((adapter) => rows.get(adapter.id)!);
    const mine = rlockValues(ordered);
    const tunedCpu = ordered
      .filter((row) => row.id.endsWith('-tuned'))
      .map((row) => num(row.values.cpuUsecPerAcq))
      .filter((v) => !Number.isNaN(v));
    const bestTunedCpu = Math.min(...tunedCpu);
    const short = ordered.filter((row) => typeof row.values.acquired === 'number' && row.values.acquired < size.acquisitions);
    return {
      id: this.id,
      title: this.title,
      setup:
        `${size.workers} workers, each with its own connection(s), one key: hold ${HOLD_MS} ms, then ${THINK_MS} ms ` +
        `outside before asking again; ${size.acquisitions.toLocaleString('en')} acquisitions per library (after ` +
        `${WARMUP_ACQUISITIONS_PER_WORKER} warm-up per worker), at most ${size.capMs / 1000} s. Ideal = 1000 / ` +
        `(${HOLD_MS} + EVALSHA p50 ms) per second. Wait: asking → holding, across calls the library gave up on. ` +
        'Hold: the 1 ms hold as the timer really ran. Free: a holder letting go → the next acquire resolved. ' +
        'Failed attempts: acquire calls the library gave up on (the worker asks again). ' +
        'Sent: commands written by the library’s connections (counted client-side). Server: INFO commandstats ' +
        'call deltas (commands run inside scripts included), the usec of the commands sent (a script’s usec ' +
        'covers its inner calls), and used_cpu_user+sys, per acquisition.',
      columns: [
        { key: 'perSecond', header: 'acq/s', digits: 0 },
        { key: 'ofIdeal', header: '÷ ideal', digits: 2 },
        { key: 'waitP50', header: 'wait p50 ms', digits: 2 },
        { key: 'waitP99', header: 'wait p99 ms', digits: 1 },
        { key: 'waitMax', header: 'wait max ms', digits: 1 },
        { key: 'holdMean', header: 'hold mean ms', digits: 2 },
        { key: 'idleP50', header: 'free p50 ms', digits: 2 },
        { key: 'gaveUp', header: 'failed attempts', digits: 0 },
        { key: 'sentPerAcq', header: 'sent/acq', digits: 2 },
        { key: 'serverCallsPerAcq', header: 'server cmds/acq', digits: 2 },
        { key: 'serverUsecPerAcq', header: 'server µs/acq (cmdstats)', digits: 1 },
        { key: 'cpuUsecPerAcq', header: 'server CPU µs/acq', digits: 1 },
        { key: 'violations', header: 'violations', digits: 0 },
      ],
      rows: ordered,
      headline: { key: 'perSecond', higherIsBetter: true },
      targets: mine
        ? [
            { target: 'throughput ≥ 0.8 × ideal', measured: `${num(mine.ofIdeal).toFixed(2)} ×`, met: num(mine.ofIdeal) >= 0.8 },
            { target: 'wait p99 ≤ 50 ms', measured: `${num(mine.waitP99).toFixed(1)} ms`, met: num(mine.waitP99) <= 50 },
            { target: '≤ 4 commands sent per acquisition', measured: num(mine.sentPerAcq).toFixed(2), met: num(mine.sentPerAcq) <= 4 },
            {
              target: 'server CPU per acquisition ≤ the best tuned peer’s',
              measured: `${num(mine.cpuUsecPerAcq).toFixed(1)} µs vs ${bestTunedCpu.toFixed(1)} µs`,
              met: num(mine.cpuUsecPerAcq) <= bestTunedCpu,
            },
            { target: '0 mutual-exclusion violations', measured: String(mine.violations), met: mine.violations === 0 },
          ]
        : [],
      notes: [
        ...short.map((row) => `${row.label}: stopped at the time budget after ${String(row.values.acquired)} acquisitions.`),
        'Server CPU includes the server’s own background work over the run, so slower runs carry a little more of it.',
      ],
      detail: { sizes: size, holdMs: HOLD_MS, thinkMs: THINK_MS, commands },
    };
  },
};
