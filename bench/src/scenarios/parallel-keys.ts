import type { LibraryAdapter, Locker } from '../adapters/adapter.js';
import { rawSetNx } from '../baselines/raw-set-nx.js';
import { rawSetNxGlide } from '../baselines/raw-set-nx-glide.js';
import { rawSetNxNodeRedis } from '../baselines/raw-set-nx-node-redis.js';
import { median, shuffled } from '../stats.js';
import { failedRow, LEASE_MS, libraryRow, num, rlockValues, WAIT_MS, withLibrary, type Row, type Scenario } from './scenario.js';

const SIZES = { full: { tasks: 100, cycles: 20_000, rounds: 3 }, quick: { tasks: 100, cycles: 2_000, rounds: 1 } };
const WARMUP_CYCLES_PER_TASK = 3;

/** `tasks` concurrent tasks, each cycling on its own key; resolves with the failed count. */
async function cycleAll(locker: Locker, keyBase: string, tasks: number, cyclesPerTask: number): Promise<number> {
  let failed = 0;
  await Promise.all(
    Array.from({ length: tasks }, async (_, task) => {
      const key = `${keyBase}:${task}`;
      for (let i = 0; i < cyclesPerTask; i += 1) {
        const release = await locker.acquire(key, LEASE_MS, WAIT_MS);
        if (release) await release();
        else failed += 1;
      }
    }),
  );
  return failed;
}

/** 2. Many tasks on one connection, each on its own key: throughput against raw SET NX PX. */
export const parallelKeys: Scenario = {
  id: '2',
  title: 'Parallel distinct keys',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const cyclesPerTask = Math.round(size.cycles / size.tasks);
    const entries: LibraryAdapter[] = [...context.adapters, rawSetNx, rawSetNxNodeRedis, rawSetNxGlide];
    const perRound = new Map<string, number[]>();
    /** This process's CPU time per cycle (the library's client and the connection's), µs. */
    const cpuPerRound = new Map<string, number[]>();
    const errors = new Map<string, unknown>();
    for (let round = 0; round < size.rounds; round += 1) {
      for (const adapter of shuffled(entries, context.random)) {
        if (errors.has(adapter.id)) continue;
        try {
          const { cyclesPerSec, failed, clientCpuUsec } = await withLibrary(context, adapter, async (open) => {
            const locker = await open();
            const keyBase = `s2:${adapter.id}:${round}`;
            await cycleAll(locker, `${keyBase}:warmup`, size.tasks, WARMUP_CYCLES_PER_TASK);
            const cpuBefore = process.cpuUsage();
            const start = performance.now();
            const failedCycles = await cycleAll(locker, keyBase, size.tasks, cyclesPerTask);
            const elapsedMs = performance.now() - start;
            const cpu = process.cpuUsage(cpuBefore);
            const cycles = size.tasks * cyclesPerTask;
            return { cyclesPerSec: (cycles / elapsedMs) * 1000, failed: failedCycles, clientCpuUsec: (cpu.user + cpu.system) / cycles };
          });
          if (failed > 0) throw new Error(`${failed} acquisitions failed on keys nobody else used`);
          perRound.set(adapter.id, [...(perRound.get(adapter.id) ?? []), cyclesPerSec]);
          cpuPerRound.set(adapter.id, [...(cpuPerRound.get(adapter.id) ?? []), clientCpuUsec]);
          context.log(`  round ${round + 1} ${adapter.id}: ${cyclesPerSec.toFixed(0)} cycles/s, client CPU ${clientCpuUsec.toFixed(1)} µs/cycle`);
        } catch (error) {
          errors.set(adapter.id, error);
          context.log(`  ${adapter.id} failed: ${String(error)}`);
        }
      }
    }

    const rows: Row[] = entries.map((adapter) => {
      const rounds = perRound.get(adapter.id);
      if (!rounds) return failedRow(adapter, errors.get(adapter.id));
      // Each round against the baseline on the same client, of the same round, then the median of those ratios.
      const baseline = perRound.get(adapter.baseline ?? rawSetNx.id) ?? [];
      const ratios = rounds.map((value, round) => value / (baseline[round] ?? Number.NaN));
      const cpu = cpuPerRound.get(adapter.id) ?? [];
      const baselineCpu = cpuPerRound.get(adapter.baseline ?? rawSetNx.id) ?? [];
      const cpuRatios = cpu.map((value, round) => value / (baselineCpu[round] ?? Number.NaN));
      return libraryRow(adapter, { cyclesPerSec: median(rounds), ratio: median(ratios), clientCpuUsec: median(cpu), cpuRatio: median(cpuRatios) });
    });
    const mine = rlockValues(rows);
    return {
      id: this.id,
      title: this.title,
      setup:
        `${size.tasks} concurrent tasks on one connection, each locking and unlocking its own key, ` +
        `${(size.tasks * cyclesPerTask).toLocaleString('en')} cycles in all, × ${size.rounds} round(s) ` +
        `(after ${WARMUP_CYCLES_PER_TASK} warm-up cycles per task). Baseline: \`SET key token NX PX\` + a ` +
        'compare-and-delete script, the least a correct lock does. Client CPU: `process.cpuUsage()` of the bench ' +
        'process over the cycles (the library and its Redis client), per cycle, and its ratio to the baseline on the same client in the same round. Medians over rounds.',
      columns: [
        { key: 'cyclesPerSec', header: 'cycles/s', digits: 0 },
        { key: 'ratio', header: '÷ baseline', digits: 2 },
        { key: 'clientCpuUsec', header: 'client CPU µs/cycle', digits: 1 },
        { key: 'cpuRatio', header: 'client CPU ÷ baseline', digits: 2 },
      ],
      rows,
      headline: { key: 'cyclesPerSec', higherIsBetter: true },
      targets: mine
        ? [
            { target: 'throughput ≥ 0.95 × the raw baseline', measured: `${num(mine.ratio).toFixed(2)} ×`, met: num(mine.ratio) >= 0.95 },
            {
              target: 'client CPU per tryLock+unlock cycle ≤ 1.5 × the raw baseline’s',
              measured: `${num(mine.cpuRatio).toFixed(2)} × (${num(mine.clientCpuUsec).toFixed(1)} µs)`,
              met: num(mine.cpuRatio) <= 1.5,
            },
          ]
        : [],
      notes: [],
      detail: { sizes: size, rounds: Object.fromEntries(perRound) },
    };
  },
};
