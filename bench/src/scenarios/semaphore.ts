import { setTimeout as sleep } from 'node:timers/promises';
import { SEMAPHORE_ADAPTERS, type PermitTaker, type SemaphoreAdapter } from '../adapters/semaphores.js';
import { Connections, sentBetween } from '../connections.js';
import { evalshaFloor } from '../floor.js';
import { serverSnapshot, serverWork } from '../server-stats.js';
import { distribution, shuffled } from '../stats.js';
import { LEASE_MS, num, pastDeadline, rlockValues, WAIT_MS, type Cell, type Row, type Scenario } from './scenario.js';

const SIZES = {
  full: { workers: 20, acquisitions: 4_000, floorCalls: 1_000, capMs: 150_000 },
  quick: { workers: 20, acquisitions: 400, floorCalls: 200, capMs: 30_000 },
};
const PERMITS = 5;
const HOLD_MS = 1;
const THINK_MS = 2;
const WARMUP_ACQUISITIONS_PER_WORKER = 2;

interface Outcome {
  waits: number[];
  /** How long each hold really lasted (a 1 ms timer takes longer). */
  holds: number[];
  /** From a permit being let go (oldest first) to the next acquire resolving: the handoff. */
  idles: number[];
  gaveUp: number;
  /** Acquisitions that found `PERMITS` holders already inside (seen by a local counter). */
  overGrants: number;
  elapsedMs: number;
  /** This process's CPU time over the run (every worker's client runs in it), µs. */
  clientCpuUsec: number;
}

/** Workers take one permit, hold, release and think until `acquisitions` were taken. */
async function contend(workers: readonly PermitTaker[], name: string, acquisitions: number, deadline: number): Promise<Outcome> {
  let tickets = acquisitions;
  let inside = 0;
  /** When each permit let go and not taken again yet was let go, oldest first. */
  const freed: number[] = [];
  const outcome: Outcome = { waits: [], holds: [], idles: [], gaveUp: 0, overGrants: 0, elapsedMs: 0, clientCpuUsec: 0 };
  const start = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    workers.map(async (worker) => {
      while (tickets > 0 && !pastDeadline(deadline)) {
        tickets -= 1;
        const askedAt = performance.now();
        let release = await worker.acquire(name, PERMITS, LEASE_MS, WAIT_MS);
        while (!release && !pastDeadline(deadline)) {
          outcome.gaveUp += 1;
          release = await worker.acquire(name, PERMITS, LEASE_MS, WAIT_MS);
        }
        if (!release) break;
        const acquiredAt = performance.now();
        outcome.waits.push(acquiredAt - askedAt);
        const freedAt = freed.shift();
        if (freedAt !== undefined) outcome.idles.push(acquiredAt - freedAt);
        if (inside >= PERMITS) outcome.overGrants += 1;
        inside += 1;
        await sleep(HOLD_MS);
        // Left before the release is sent: the next holder can only get in after it.
        inside -= 1;
        const letGoAt = performance.now();
        outcome.holds.push(letGoAt - acquiredAt);
        freed.push(letGoAt);
        await release();
        await sleep(THINK_MS);
      }
    }),
  );
  outcome.elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  outcome.clientCpuUsec = cpu.user + cpu.system;
  return outcome;
}

function selected(lockAdapters: readonly { id: string }[]): SemaphoreAdapter[] {
  const ids = new Set(lockAdapters.map((adapter) => adapter.id));
  return SEMAPHORE_ADAPTERS.filter((adapter) => ids.has(adapter.lockAdapter));
}

/**
 * 7. A counting semaphore: twenty workers, each with its own connection, share five permits:
 * hold 1 ms, then 2 ms outside before asking again. Throughput against the ideal (five permits,
 * each busy for one hold + one round trip per acquisition), waits, and the work per acquisition.
 */
export const semaphore: Scenario = {
  id: '7',
  title: 'Semaphore: 5 permits, 20 workers, with think time',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const adapters = selected(context.adapters);
    const rows = new Map<string, Row>();
    const commands: Record<string, unknown> = {};
    for (const adapter of shuffled(adapters, context.random)) {
      const connections = new Connections(context.url);
      const workers: PermitTaker[] = [];
      try {
        for (let i = 0; i < size.workers; i += 1) workers.push(await adapter.open(connections));
        const floor = await evalshaFloor(workers[0]!.connection, size.floorCalls);
        const name = `s7:${adapter.id}`;
        const deadline = performance.now() + size.capMs;
        await contend(workers, name, size.workers * WARMUP_ACQUISITIONS_PER_WORKER, deadline);
        const sentBefore = connections.sent();
        const serverBefore = await serverSnapshot(context.admin);
        const outcome = await contend(workers, name, size.acquisitions, deadline);
        const serverAfter = await serverSnapshot(context.admin);
        const sent = sentBetween(sentBefore, connections.sent());
        const work = serverWork(serverBefore, serverAfter, sent);
        const acquired = outcome.waits.length;
        const sentTotal = [...sent.values()].reduce((a, b) => a + b, 0);
        const perSecond = (acquired / outcome.elapsedMs) * 1000;
        const ideal = (PERMITS * 1000) / (HOLD_MS + floor.p50);
        const wait = distribution(outcome.waits);
        commands[adapter.id] = { sent: Object.fromEntries(sent), server: work.calls, serverUsec: work.usecByCommand };
        const values: Record<string, Cell> = {
          perSecond,
          ofIdeal: perSecond / ideal,
          waitP50: wait.p50,
          waitP99: wait.p99,
          waitMax: wait.max,
          holdMean: outcome.holds.reduce((a, b) => a + b, 0) / outcome.holds.length,
          idleP50: distribution(outcome.idles).p50,
          gaveUp: outcome.gaveUp,
          sentPerAcq: sentTotal / acquired,
          serverCallsPerAcq: work.totalCalls / acquired,
          cpuUsecPerAcq: (work.cpuSeconds * 1e6) / acquired,
          clientCpuUsecPerAcq: outcome.clientCpuUsec / acquired,
          clientCpuShare: outcome.clientCpuUsec / 1000 / outcome.elapsedMs,
          overGrants: outcome.overGrants,
          acquired,
          floorP50: floor.p50,
        };
        rows.set(adapter.id, { id: adapter.id, label: adapter.label, values });
        context.log(
          `  ${adapter.id}: ${perSecond.toFixed(0)}/s (${(perSecond / ideal).toFixed(2)} of ideal), wait p99 ` +
            `${wait.p99.toFixed(1)} ms, ${(sentTotal / acquired).toFixed(1)} sent/acq, ${outcome.overGrants} over-grants`,
        );
      } catch (error) {
        rows.set(adapter.id, { id: adapter.id, label: adapter.label, values: { error: error instanceof Error ? error.message : String(error) } });
        context.log(`  ${adapter.id} failed: ${String(error)}`);
      } finally {
        for (const worker of workers) await worker.close();
        connections.close();
      }
    }

    const ordered = adapters.map((adapter) => rows.get(adapter.id)!);
    const mine = rlockValues(ordered);
    return {
      id: this.id,
      title: this.title,
      setup:
        `${size.workers} workers, each with its own connection(s), one semaphore of ${PERMITS} permits: each takes one ` +
        `permit, holds it ${HOLD_MS} ms, then spends ${THINK_MS} ms outside before asking again; ` +
        `${size.acquisitions.toLocaleString('en')} acquisitions per library (after ${WARMUP_ACQUISITIONS_PER_WORKER} ` +
        `warm-up per worker), at most ${size.capMs / 1000} s, lease ${LEASE_MS / 1000} s. Ideal = ${PERMITS} × 1000 / ` +
        `(${HOLD_MS} + EVALSHA p50 ms) per second. Wait: asking → holding. Hold: the 1 ms hold as the timer really ran. Free: a permit let go → ` +
        `the next acquire resolved (permits paired oldest first). Over-grants: acquisitions that found ` +
        `${PERMITS} holders inside already (all holders are in this process). Sent and server columns as in scenario 4. Client CPU: ` +
        `the bench process's user+sys time (all 20 workers' clients run in it), per acquisition and in cores. ` +
        `How each waits: ${adapters.map((adapter) => `${adapter.label}: ${adapter.waiting}`).join('; ')}.`,
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
        { key: 'cpuUsecPerAcq', header: 'server CPU µs/acq', digits: 1 },
        { key: 'clientCpuUsecPerAcq', header: 'client CPU µs/acq', digits: 1 },
        { key: 'clientCpuShare', header: 'client CPU, cores', digits: 2 },
        { key: 'overGrants', header: 'over-grants', digits: 0 },
      ],
      rows: ordered,
      headline: { key: 'perSecond', higherIsBetter: true },
      targets: mine
        ? [
            { target: 'throughput ≥ 0.8 × ideal', measured: `${num(mine.ofIdeal).toFixed(2)} ×`, met: num(mine.ofIdeal) >= 0.8 },
            { target: 'wait p99 ≤ 50 ms', measured: `${num(mine.waitP99).toFixed(1)} ms`, met: num(mine.waitP99) <= 50 },
            { target: '0 over-grants', measured: String(mine.overGrants), met: mine.overGrants === 0 },
          ]
        : [],
      notes: ['Server CPU includes the server’s own background work over the run, so slower runs carry a little more of it.'],
      detail: { sizes: size, permits: PERMITS, holdMs: HOLD_MS, thinkMs: THINK_MS, commands },
    };
  },
};
