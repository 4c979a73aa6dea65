// The benchmark: rlock against the Node lock libraries people use, side by side, on a
// redis-server of its own. Run from the repository root: `npm run bench` (add `-- --quick`).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { spawnRedis } from '../../tools/redis-server.js';
import { ADAPTERS } from './adapters/index.js';
import { describeMachine } from './machine.js';
import { renderMarkdown } from './report/markdown.js';
import { updateReadme } from './report/readme.js';
import { renderSummary } from './report/summary.js';
import { renderChart } from './report/svg-chart.js';
import { SCENARIOS } from './scenarios/index.js';
import type { ScenarioReport } from './scenarios/scenario.js';
import { seededRandom } from './stats.js';

const USAGE = `usage: npm run bench -- [--quick] [--scenarios=1,3] [--libraries=rlock,redlock4-tuned] [--seed=N] [--otel]
  --quick       reduced sizes (checks the bench; numbers not for comparison)
  --otel        rlock instrumented into the OpenTelemetry SDK (rlock/otel: metrics and spans)
  --scenarios   run only these scenarios (ids: ${SCENARIOS.map((s) => s.id).join(', ')})
  --libraries   run only these (ids: ${ADAPTERS.map((a) => a.id).join(', ')})
  --seed        replay a run's library order
A full run of everything writes bench/results/latest.{md,json,svg} and the table in docs/performance.md;
anything else writes bench/results/quick.*`;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    libraries: { type: 'string' },
    seed: { type: 'string' },
    otel: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}

function pick<T extends { id: string }>(all: readonly T[], list: string | undefined, what: string): T[] {
  if (list === undefined) return [...all];
  const ids = list.split(',').map((id) => id.trim());
  const unknown = ids.filter((id) => !all.some((item) => item.id === id));
  if (unknown.length > 0) throw new Error(`unknown ${what}: ${unknown.join(', ')}\n${USAGE}`);
  return all.filter((item) => ids.includes(item.id));
}

const scenarios = pick(SCENARIOS, flags.scenarios, 'scenario');
const adapters = pick(ADAPTERS, flags.libraries, 'library');
const seed = flags.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(flags.seed);
if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer\n${USAGE}`);
const quick = flags.quick ?? false;
const complete = !quick && !flags.otel && scenarios.length === SCENARIOS.length && adapters.length === ADAPTERS.length;
const outName = complete ? 'latest' : 'quick';
const resultsDir = new URL('../results/', import.meta.url);

const server = await spawnRedis();
// A Ctrl-C must not leave the spawned redis-server behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.stop().finally(() => process.exit(130)));
}
const admin = new Redis(server.url);
const stopOtel = flags.otel ? (await import('./otel.js')).startOtel() : undefined;
const started = performance.now();
const startedAt = new Date().toISOString();
try {
  const machine = await describeMachine(admin);
  console.log(
    `rlock bench${quick ? ' (quick)' : ''}: ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}, ` +
      `Redis ${machine.redis} on ${server.url}, seed ${seed}${stopOtel ? ', rlock/otel on (metrics and spans)' : ''}`,
  );
  if (typeof globalThis.gc !== 'function') console.log('note: no --expose-gc, scenario 6 cannot measure the heap');
  const random = seededRandom(seed);
  const reports: ScenarioReport[] = [];
  for (const scenario of scenarios) {
    console.log(`\n${scenario.id}. ${scenario.title}`);
    const scenarioStart = performance.now();
    reports.push(
      await scenario.run({ url: server.url, adapters, quick, random, admin, log: (line) => console.log(line) }),
    );
    console.log(`  (${((performance.now() - scenarioStart) / 1000).toFixed(0)} s)`);
  }
  machine.loadEnd = loadavg()[0]!;
  const durationS = (performance.now() - started) / 1000;
  const run = { startedAt, durationS, quick, seed, machine, adapters, chartFile: `${outName}.svg` };

  mkdirSync(resultsDir, { recursive: true });
  const caption = `${machine.cores} cores, ${machine.cpu}, Node ${machine.node}, Redis ${machine.redis}, ${startedAt.slice(0, 10)}`;
  writeFileSync(new URL(`${outName}.svg`, resultsDir), renderChart(reports, caption));
  writeFileSync(new URL(`${outName}.md`, resultsDir), renderMarkdown(run, reports));
  const json = {
    ...run,
    adapters: adapters.map(({ id, library, version, variant, waiting, note }) => ({ id, library, version, variant, waiting, note })),
    scenarios: reports,
  };
  // Four decimals are more than any of these measurements resolve.
  const round = (_key: string, value: unknown): unknown =>
    typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1e4) / 1e4 : value;
  writeFileSync(new URL(`${outName}.json`, resultsDir), `${JSON.stringify(json, round, 2)}\n`);
  // Only a complete run speaks for the published table.
  if (complete && !updateReadme(new URL('../../docs/performance.md', import.meta.url), renderSummary(run, reports))) {
    console.log('note: docs/performance.md has no bench markers; its table was not updated');
  }

  console.log(`\nrlock against the benchmark's targets:`);
  for (const report of reports) {
    for (const check of report.targets) {
      console.log(`  ${check.met ? 'met   ' : 'MISSED'} [${report.id}] ${check.target}: ${check.measured}`);
    }
  }
  console.log(`\n${Math.round(durationS)} s; wrote bench/results/${outName}.{md,json,svg}`);
} finally {
  await stopOtel?.();
  admin.disconnect();
  await server.stop();
}
