import { evalshaFloor } from '../floor.js';
import { serverSnapshot, serverWork } from '../server-stats.js';
import { distribution, median, shuffled } from '../stats.js';
import { isRlock } from '../adapters/adapter.js';
import { failedRow, LEASE_MS, libraryRow, num, rlockValues, WAIT_MS, withLibrary, type Row, type Scenario } from './scenario.js';

const SIZES = { full: { cycles: 2_000, rounds: 3, floorCalls: 1_000 }, quick: { cycles: 300, rounds: 2, floorCalls: 200 } };
const WARMUP_CYCLES = 50;

interface RoundResult {
  cyclesPerSec: number;
  p50: number;
  p99: number;
  floorP50: number;
  ratio: number;
  failed: number;
  /** The server's used_cpu_user+sys per cycle, µs. */
  serverCpuUsec: number;
  /** Commands the server ran per cycle, scripts' inner calls included. */
  serverCommands: number;
}

/** 1. One task, one key, lock/unlock back to back: the cost of a cycle against one round trip. */
export const uncontended: Scenario = {
  id: '1',
  title: 'Uncontended lock/unlock',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const results = new Map<string, RoundResult[]>();
    const errors = new Map<string, unknown>();
    for (let round = 0; round < size.rounds; round += 1) {
      for (const adapter of shuffled(context.adapters, context.random)) {
        if (errors.has(adapter.id)) continue;
        try {
          const result = await withLibrary(context, adapter, async (open) => {
            const locker = await open();
            const key = `s1:${adapter.id}:${round}`;
            for (let i = 0; i < WARMUP_CYCLES; i += 1) await (await locker.acquire(key, LEASE_MS, WAIT_MS))?.();
            const floor = await evalshaFloor(locker.connection, size.floorCalls);
            const samples: number[] = [];
            let failed = 0;
            const serverBefore = await serverSnapshot(context.admin);
            const start = performance.now();
            for (let i = 0; i < size.cycles; i += 1) {
              const cycleStart = performance.now();
              const release = await locker.acquire(key, LEASE_MS, WAIT_MS);
              if (release) await release();
              else failed += 1;
              samples.push(performance.now() - cycleStart);
            }
            const elapsedMs = performance.now() - start;
            const work = serverWork(serverBefore, await serverSnapshot(context.admin), new Map());
            const cycles = distribution(samples);
            return {
              cyclesPerSec: (size.cycles / elapsedMs) * 1000,
              p50: cycles.p50,
              p99: cycles.p99,
              floorP50: floor.p50,
              ratio: cycles.p50 / floor.p50,
              failed,
              serverCpuUsec: (work.cpuSeconds * 1e6) / size.cycles,
              serverCommands: work.totalCalls / size.cycles,
            };
          });
          results.set(adapter.id, [...(results.get(adapter.id) ?? []), result]);
          context.log(`  round ${round + 1} ${adapter.id}: ${result.cyclesPerSec.toFixed(0)} cycles/s, p50 ${result.p50.toFixed(3)} ms`);
        } catch (error) {
          errors.set(adapter.id, error);
          context.log(`  ${adapter.id} failed: ${String(error)}`);
        }
      }
    }

    const rows: Row[] = context.adapters.map((adapter) => {
      const rounds = results.get(adapter.id);
      if (!rounds) return failedRow(adapter, errors.get(adapter.id));
      const mid = (pick: (r: RoundResult) => number): number => median(rounds.map(pick));
      return libraryRow(adapter, {
        cyclesPerSec: mid((r) => r.cyclesPerSec),
        p50: mid((r) => r.p50),
        p99: mid((r) => r.p99),
        floorP50: mid((r) => r.floorP50),
        ratio: mid((r) => r.ratio),
        failed: rounds.reduce((sum, r) => sum + r.failed, 0),
        serverCpuUsec: mid((r) => r.serverCpuUsec),
        serverCommands: mid((r) => r.serverCommands),
      });
    });
    const mine = rlockValues(rows);
    const peers = rows.filter((row) => !isRlock(row.id) && !('error' in row.values));
    const bestPeer = (key: string): number => Math.min(...peers.map((row) => num(row.values[key])));
    const bestP50 = bestPeer('p50');
    const bestCpu = bestPeer('serverCpuUsec');
    return {
      id: this.id,
      title: this.title,
      setup:
        `One task, one key, ${size.cycles.toLocaleString('en')} lock+unlock cycles × ${size.rounds} rounds per library ` +
        `(after ${WARMUP_CYCLES} warm-up cycles). Floor: ${size.floorCalls.toLocaleString('en')} sequential EVALSHA of ` +
        '`return 1` on the same connection, just before. Server CPU: the server\'s used_cpu_user+sys over the ' +
        'cycles (network I/O included); server commands: INFO commandstats calls, a script and each call it makes ' +
        'counted once each. Medians over rounds.',
      columns: [
        { key: 'cyclesPerSec', header: 'cycles/s', digits: 0 },
        { key: 'p50', header: 'cycle p50 ms', digits: 3 },
        { key: 'p99', header: 'cycle p99 ms', digits: 3 },
        { key: 'floorP50', header: 'EVALSHA p50 ms', digits: 3 },
        { key: 'ratio', header: 'p50 ÷ EVALSHA p50', digits: 2 },
        { key: 'serverCpuUsec', header: 'server CPU µs/cycle', digits: 1 },
        { key: 'serverCommands', header: 'server cmds/cycle', digits: 1 },
        { key: 'failed', header: 'failed', digits: 0 },
      ],
      rows,
      headline: { key: 'cyclesPerSec', higherIsBetter: true },
      targets: mine
        ? [
            { target: 'cycle p50 ≤ 2.3 × EVALSHA p50', measured: `${num(mine.ratio).toFixed(2)} ×`, met: num(mine.ratio) <= 2.3 },
            ...(peers.length > 0
              ? [
                  {
                    target: 'cycle p50 ≤ the best peer’s',
                    measured: `${num(mine.p50).toFixed(3)} ms vs ${bestP50.toFixed(3)} ms`,
                    met: num(mine.p50) <= bestP50,
                  },
                  {
                    target: 'server CPU per cycle ≤ 1.15 × the best peer’s',
                    measured: `${num(mine.serverCpuUsec).toFixed(1)} µs vs ${bestCpu.toFixed(1)} µs`,
                    met: num(mine.serverCpuUsec) <= 1.15 * bestCpu,
                  },
                ]
              : []),
          ]
        : [],
      notes: [],
      detail: { sizes: size, rounds: Object.fromEntries(results) },
    };
  },
};
