import { isRlock } from '../adapters/adapter.js';
import type { ScenarioReport } from '../scenarios/scenario.js';

/** One bar: a library and its value; `kind` picks the colour. */
interface Bar {
  readonly label: string;
  readonly value: number;
  readonly kind: 'rlock' | 'defaults' | 'tuned';
}

interface Panel {
  readonly title: string;
  readonly unit: string;
  readonly bars: readonly Bar[];
  /** A vertical reference line (the ideal, the floor). */
  readonly reference?: { readonly value: number; readonly label: string };
}

const WIDTH = 920;
const LABEL_WIDTH = 300;
const PLOT_WIDTH = 520;
const BAR_HEIGHT = 16;
const ROW_HEIGHT = 22;
const COLOURS = { rlock: '#d9480f', tuned: '#495057', defaults: '#adb5bd' } as const;

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function compact(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  if (value >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

function decadeLabel(decade: number): string {
  return decade < 0 ? (10 ** decade).toFixed(-decade) : (10 ** decade).toLocaleString('en');
}

function panelSvg(panel: Panel, top: number): { svg: string; height: number } {
  const values = [...panel.bars.map((bar) => bar.value), ...(panel.reference ? [panel.reference.value] : [])].filter(
    (value) => value > 0 && Number.isFinite(value),
  );
  const low = Math.floor(Math.log10(Math.min(...values)));
  const high = Math.max(low + 1, Math.ceil(Math.log10(Math.max(...values))));
  const x = (value: number): number => LABEL_WIDTH + ((Math.log10(value) - low) / (high - low)) * PLOT_WIDTH;
  const plotTop = top + 40;
  const plotHeight = panel.bars.length * ROW_HEIGHT;
  const parts: string[] = [
    `<text x="12" y="${top + 16}" class="title">${escape(panel.title)}</text>`,
  ];
  for (let decade = low; decade <= high; decade += 1) {
    const at = x(10 ** decade);
    parts.push(
      `<line x1="${at.toFixed(1)}" y1="${plotTop - 4}" x2="${at.toFixed(1)}" y2="${plotTop + plotHeight}" class="grid"/>`,
      `<text x="${at.toFixed(1)}" y="${plotTop + plotHeight + 14}" class="tick">${decadeLabel(decade)}</text>`,
    );
  }
  panel.bars.forEach((bar, index) => {
    const y = plotTop + index * ROW_HEIGHT;
    parts.push(`<text x="${LABEL_WIDTH - 8}" y="${y + BAR_HEIGHT - 4}" class="label">${escape(bar.label)}</text>`);
    if (!(bar.value > 0) || !Number.isFinite(bar.value)) {
      parts.push(`<text x="${LABEL_WIDTH + 4}" y="${y + BAR_HEIGHT - 4}" class="value">no result</text>`);
      return;
    }
    const end = x(bar.value);
    parts.push(
      `<rect x="${LABEL_WIDTH}" y="${y}" width="${Math.max(1, end - LABEL_WIDTH).toFixed(1)}" ` +
        `height="${BAR_HEIGHT}" fill="${COLOURS[bar.kind]}"/>`,
      `<text x="${(end + 4).toFixed(1)}" y="${y + BAR_HEIGHT - 4}" class="value">` +
        `${escape(`${compact(bar.value)} ${panel.unit}`)}</text>`,
    );
  });
  if (panel.reference && panel.reference.value > 0) {
    const at = x(panel.reference.value);
    parts.push(
      `<line x1="${at.toFixed(1)}" y1="${plotTop - 6}" x2="${at.toFixed(1)}" y2="${plotTop + plotHeight}" class="reference"/>`,
      `<text x="${at.toFixed(1)}" y="${plotTop - 9}" class="reference-label">${escape(panel.reference.label)}</text>`,
    );
  }
  return { svg: parts.join('\n'), height: plotHeight + 68 };
}

function barsOf(report: ScenarioReport | undefined, key: string): Bar[] {
  if (!report) return [];
  return report.rows
    .filter((row) => row.id !== 'raw-set-nx')
    .map((row) => ({
      label: row.label,
      value: typeof row.values[key] === 'number' ? row.values[key] : Number.NaN,
      kind: isRlock(row.id) ? 'rlock' : row.id.endsWith('-tuned') ? 'tuned' : 'defaults',
    }));
}

function firstNumber(report: ScenarioReport | undefined, key: string): number {
  const row = report?.rows.find((candidate) => typeof candidate.values[key] === 'number');
  return typeof row?.values[key] === 'number' ? row.values[key] : Number.NaN;
}

/**
 * The chart in docs/performance.md: the ping-pong handoff gap (scenario 3) and the contended throughput
 * (scenario 4) per library, both on log scales. Plain SVG, no chart library.
 */
export function renderChart(reports: readonly ScenarioReport[], caption: string): string {
  const pingPong = reports.find((report) => report.id === '3');
  const contended = reports.find((report) => report.id === '4');
  const floorMs = firstNumber(pingPong, 'floorP50');
  const floor4 = firstNumber(contended, 'floorP50');
  const panels: Panel[] = [];
  if (pingPong) {
    panels.push({
      title: 'Ping-pong handoff gap, p50 (ms, log scale; lower is better)',
      unit: 'ms',
      bars: barsOf(pingPong, 'gapP50'),
      reference: { value: floorMs, label: 'one EVALSHA' },
    });
  }
  if (contended) {
    panels.push({
      title: 'Contended with think time: acquisitions/s (log scale; higher is better)',
      unit: '/s',
      bars: barsOf(contended, 'perSecond'),
      reference: { value: 1000 / (1 + floor4), label: 'ideal' },
    });
  }
  let top = 8;
  const bodies: string[] = [];
  for (const panel of panels) {
    const { svg, height } = panelSvg(panel, top);
    bodies.push(svg);
    top += height + 10;
  }
  const legendY = top + 4;
  const legendX = { rlock: LABEL_WIDTH, tuned: LABEL_WIDTH + 80, defaults: LABEL_WIDTH + 300 } as const;
  const legend = (['rlock', 'tuned', 'defaults'] as const)
    .map((kind) => {
      const x = legendX[kind];
      const text = kind === 'rlock' ? 'rlock' : kind === 'tuned' ? 'peer, tuned (10 ms polling)' : 'peer, defaults';
      return (
        `<rect x="${x}" y="${legendY}" width="12" height="12" fill="${COLOURS[kind]}"/>` +
        `<text x="${x + 18}" y="${legendY + 10}" class="value">${escape(text)}</text>`
      );
    })
    .join('\n');
  const height = legendY + 40;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" ` +
      'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">',
    '<style>.title{font-weight:600;font-size:13px}.label{text-anchor:end}.tick{text-anchor:middle;fill:#666;font-size:11px}' +
      '.value{fill:#222}.grid{stroke:#e5e5e5}.reference{stroke:#1971c2;stroke-dasharray:4 3}' +
      '.reference-label{fill:#1971c2;text-anchor:middle;font-size:11px}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...bodies,
    legend,
    `<text x="12" y="${height - 10}" class="tick" style="text-anchor:start">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
