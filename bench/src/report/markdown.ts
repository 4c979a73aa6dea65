import { isRlock } from '../adapters/adapter.js';
import type { Row, ScenarioReport } from '../scenarios/scenario.js';
import { formatCell } from './format.js';
import type { RunInfo } from './run-info.js';
import { renderSummary } from './summary.js';

function ratioCell(report: ScenarioReport, row: Row, rlock: Row | undefined): string {
  if (!rlock || isRlock(row.id)) return '';
  const mine = rlock.values[report.headline.key];
  const theirs = row.values[report.headline.key];
  if (typeof mine !== 'number' || typeof theirs !== 'number' || theirs === 0) return '–';
  return (mine / theirs).toFixed(mine / theirs >= 10 ? 0 : 2);
}

function scenarioTable(report: ScenarioReport): string {
  const rlock = report.rows.find((row) => row.id === 'rlock');
  const headlineColumn = report.columns.find((column) => column.key === report.headline.key)!;
  const better = report.headline.higherIsBetter ? 'above 1: rlock better' : 'below 1: rlock better';
  const header = ['library', ...report.columns.map((column) => column.header), `rlock/peer (${headlineColumn.header}; ${better})`];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, index) => (index === 0 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const row of report.rows) {
    const error = row.values.error;
    const cells =
      typeof error === 'string'
        ? report.columns.map((_, index) => (index === 0 ? `failed: ${error.replace(/\|/g, '\\|')}` : ''))
        : report.columns.map((column) => formatCell(row.values[column.key], column));
    const label = isRlock(row.id) ? `**${row.label}**` : row.label;
    lines.push(`| ${[label, ...cells, ratioCell(report, row, rlock)].join(' | ')} |`);
  }
  return lines.join('\n');
}

function targetLines(report: ScenarioReport): string[] {
  return report.targets.map((check) => `- ${check.met ? '✅ met' : '❌ missed'}: ${check.target} — measured ${check.measured}`);
}

/** The whole run as markdown: machine, libraries, one table per scenario, rlock's targets. */
export function renderMarkdown(run: RunInfo, reports: readonly ScenarioReport[]): string {
  const { machine } = run;
  const out: string[] = [
    `# rlock benchmark${run.quick ? ' (quick run: reduced sizes, not for comparison)' : ''}`,
    '',
    `Run ${run.startedAt}, ${Math.round(run.durationS)} s, library order seed ${run.seed}.`,
    '',
    `Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memoryGb} GB, ${machine.os}; Node ${machine.node}; ` +
      `Redis ${machine.redis} (spawned by the bench on 127.0.0.1, no persistence). ` +
      `1-minute load average ${machine.loadStart.toFixed(2)} at the start, ${machine.loadEnd.toFixed(2)} at the end.`,
    '',
    '## Libraries',
    '',
    '| id | library | configuration | how it waits | note |',
    '| --- | --- | --- | --- | --- |',
    ...run.adapters.map(
      (adapter) =>
        `| ${adapter.id} | ${adapter.library} ${adapter.version} | ${adapter.variant} | ${adapter.waiting} | ${adapter.note ?? ''} |`,
    ),
    '',
    'All leases are 10 s; callers wait up to 10 s (a peer on its defaults gives up after its own retry budget, and',
    'the scenario asks again). Every library runs on the same ioredis version (rlock on node-redis on node-redis,',
    'compared with a raw baseline on node-redis), one Redis, and the order of libraries is shuffled per scenario',
    'and round.',
    '',
    `![handoff gap and contended throughput per library](${run.chartFile})`,
    '',
    '## Summary',
    '',
    renderSummary(run, reports),
    '',
  ];
  for (const report of reports) {
    out.push(`## ${report.id}. ${report.title}`, '', report.setup, '', scenarioTable(report), '');
    const targets = targetLines(report);
    if (targets.length > 0) out.push('rlock against the benchmark’s targets:', '', ...targets, '');
    if (report.notes.length > 0) out.push(...report.notes.map((note) => `> ${note}`), '');
  }
  return out.join('\n');
}
