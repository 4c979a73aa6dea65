import { isRlock } from '../adapters/adapter.js';
import type { Cell, ScenarioReport } from '../scenarios/scenario.js';
import { formatCell } from './format.js';
import type { RunInfo } from './run-info.js';

/** A summary column: one metric of one scenario. */
interface SummaryColumn {
  readonly scenario: string;
  readonly key: string;
  readonly header: string;
  readonly digits: number;
}

const COLUMNS: readonly SummaryColumn[] = [
  { scenario: '1', key: 'ratio', header: 'uncontended p50 ÷ EVALSHA', digits: 2 },
  { scenario: '2', key: 'ratio', header: 'parallel keys ÷ raw SET NX', digits: 2 },
  { scenario: '3', key: 'gapP50', header: 'handoff gap p50 ms', digits: 3 },
  { scenario: '3', key: 'gapP99', header: 'handoff gap p99 ms', digits: 2 },
  { scenario: '4', key: 'perSecond', header: 'contended acq/s', digits: 0 },
  { scenario: '4', key: 'ofIdeal', header: '÷ ideal', digits: 2 },
  { scenario: '4', key: 'waitP99', header: 'wait p99 ms', digits: 0 },
  { scenario: '4', key: 'sentPerAcq', header: 'sent/acq', digits: 1 },
  { scenario: '4', key: 'cpuUsecPerAcq', header: 'Redis CPU µs/acq', digits: 0 },
  { scenario: '5', key: 'outOfOrderP50', header: 'out of order of 10', digits: 1 },
  { scenario: '6', key: 'heapGrowthKb', header: 'steady heap growth KB', digits: 0 },
];

/**
 * The table in docs/performance.md: one row per library, the headline numbers of each scenario, then rlock
 * against the issue's targets. Full tables are in bench/results/latest.md.
 */
export function renderSummary(run: RunInfo, reports: readonly ScenarioReport[]): string {
  const byId = new Map(reports.map((report) => [report.id, report]));
  const columns = COLUMNS.filter((column) => byId.has(column.scenario));
  const header = ['library', ...columns.map((column) => `${column.header} (${column.scenario})`)];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, index) => (index === 0 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const adapter of run.adapters) {
    const cells = columns.map((column) => {
      const row = byId.get(column.scenario)?.rows.find((candidate) => candidate.id === adapter.id);
      const value: Cell | undefined = row?.values[column.key];
      return typeof row?.values.error === 'string' ? 'failed' : formatCell(value, column);
    });
    const label = `${adapter.library} ${adapter.version} (${adapter.variant})`;
    lines.push(`| ${[isRlock(adapter.id) ? `**${label}**` : label, ...cells].join(' | ')} |`);
  }
  const { machine } = run;
  const busy = machine.loadStart > machine.cores / 2;
  const targets = reports.flatMap((report) =>
    report.targets.map((check) => `- ${check.met ? '✅' : '❌'} (${report.id}) ${check.target}: ${check.measured}`),
  );
  return [
    `${run.quick ? 'Quick run (reduced sizes)' : 'Full run'}: ${run.startedAt.slice(0, 10)}, ` +
      `${machine.cores} cores (${machine.cpu}), Node ${machine.node}, ` +
      `Redis ${machine.redis}; 1-minute load average ${machine.loadStart.toFixed(2)} at the start` +
      `${busy ? ' (other work was running: the numbers are noisy)' : ''}. Scenario numbers in parentheses.`,
    '',
    ...lines,
    '',
    'rlock against the benchmark\'s targets:',
    '',
    ...targets,
  ].join('\n');
}
