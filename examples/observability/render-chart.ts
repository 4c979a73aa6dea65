// Draws docs/observability-dashboard.svg from a real run: starts the example (workload.ts), scrapes
// its Prometheus endpoint every second for DURATION_S seconds (default 30), and charts what the
// Grafana dashboard (dashboard.json) shows: wait p50/p99, holds and waiters, acquisitions by
// outcome, losses and renewal failures. Every number in the picture comes from the scrapes.
// Run: node --import tsx --import ./tools/register-lua.mjs examples/observability/render-chart.ts
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { findRedis } from '../../tools/find-redis.js';
import { bucketsOf, parseExposition, quantileBetween, sumOf, type Sample } from './scrape.js';
import { startObservabilityExample } from './workload.js';

const durationS = Number(process.env.DURATION_S ?? 30);
const WINDOW = 5; // scrapes (s) per rate and quantile window, as rate(...[5s])
const out = new URL('../../docs/observability-dashboard.svg', import.meta.url);

const found = await findRedis();
const example = await startObservabilityExample({ redisUrl: found.url, port: 9464, keyPrefix: `rlock-chart-${randomUUID().slice(0, 8)}` });
const scrapes: Sample[][] = [];
try {
  for (let s = 0; s <= durationS; s += 1) {
    const started = performance.now();
    scrapes.push(parseExposition(await (await fetch(example.metricsUrl)).text()));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_000 - (performance.now() - started))));
  }
} finally {
  await example.stop();
  await found.release();
}

type Series = { label: string; color: string; points: [number, number][] };
const at = (fn: (now: Sample[], before: Sample[]) => number): [number, number][] =>
  scrapes.flatMap((now, t) => (t < WINDOW ? [] : ([[t, fn(now, scrapes[t - WINDOW]!)]] as [number, number][]))).filter(([, v]) => Number.isFinite(v));
const gauge = (fn: (now: Sample[]) => number): [number, number][] => scrapes.map((now, t) => [t, fn(now)]);
const waitQuantile = (q: number) =>
  at((now, before) => {
    const match = { rlock_acquire_outcome: 'acquired', rlock_lock_kind: 'lock', rlock_lock_name: 'inventory' };
    return quantileBetween(bucketsOf(before, 'rlock_acquire_duration', match), bucketsOf(now, 'rlock_acquire_duration', match), q) * 1_000;
  });
const perSecond = (outcome: string) =>
  at((now, before) => (sumOf(now, 'rlock_acquire_duration_count', { rlock_acquire_outcome: outcome }) - sumOf(before, 'rlock_acquire_duration_count', { rlock_acquire_outcome: outcome })) / WINDOW);

const panels: { title: string; unit: string; series: Series[] }[] = [
  {
    title: 'Wait for inventory locks, acquired (5 s windows)',
    unit: 'ms',
    series: [
      { label: 'p50', color: '#1f77b4', points: waitQuantile(0.5) },
      { label: 'p99', color: '#d62728', points: waitQuantile(0.99) },
    ],
  },
  {
    title: 'Holds and waiters (now)',
    unit: '',
    series: [
      { label: 'locks held', color: '#2ca02c', points: gauge((s) => sumOf(s, 'rlock_holds_active', { rlock_lock_kind: 'lock' })) },
      { label: 'permits held', color: '#9467bd', points: gauge((s) => sumOf(s, 'rlock_holds_active', { rlock_lock_kind: 'semaphore' })) },
      { label: 'waiters', color: '#ff7f0e', points: gauge((s) => sumOf(s, 'rlock_waiters_active')) },
    ],
  },
  {
    title: 'Acquisitions by outcome (per second, 5 s windows)',
    unit: '/s',
    series: [
      { label: 'acquired', color: '#2ca02c', points: perSecond('acquired') },
      { label: 'timeout', color: '#d62728', points: perSecond('timeout') },
    ],
  },
  {
    title: 'Lost holds and renewal failures (total)',
    unit: '',
    series: [
      { label: 'lost (deleted)', color: '#d62728', points: gauge((s) => sumOf(s, 'rlock_lost_total', { rlock_lost_reason: 'deleted' })) },
      { label: 'renewal failures', color: '#8c564b', points: gauge((s) => sumOf(s, 'rlock_renewal_failures_total')) },
    ],
  },
];

const W = 480;
const H = 230;
const pad = { left: 48, right: 12, top: 30, bottom: 44 };
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
function panel(p: (typeof panels)[number], x0: number, y0: number): string {
  const all = p.series.flatMap((s) => s.points.map(([, v]) => v));
  const top = Math.max(1, ...all) * 1.1;
  const ix = (t: number): number => x0 + pad.left + (t / durationS) * (W - pad.left - pad.right);
  const iy = (v: number): number => y0 + H - pad.bottom - (v / top) * (H - pad.top - pad.bottom);
  const parts = [`<rect x="${x0 + 0.5}" y="${y0 + 0.5}" width="${W - 1}" height="${H - 1}" fill="#fff" stroke="#ddd"/>`];
  parts.push(`<text x="${x0 + 10}" y="${y0 + 19}" font-size="13" font-weight="bold">${esc(p.title)}</text>`);
  for (const f of [0, 0.5, 1]) {
    const v = (top / 1.1) * f;
    parts.push(`<line x1="${ix(0)}" x2="${ix(durationS)}" y1="${iy(v)}" y2="${iy(v)}" stroke="#eee"/>`);
    parts.push(`<text x="${x0 + pad.left - 4}" y="${iy(v) + 4}" font-size="10" text-anchor="end">${v >= 10 ? v.toFixed(0) : v.toFixed(1)}${p.unit}</text>`);
  }
  for (let t = 0; t <= durationS; t += 10) parts.push(`<text x="${ix(t)}" y="${y0 + H - pad.bottom + 14}" font-size="10" text-anchor="middle">${t} s</text>`);
  p.series.forEach((s, i) => {
    if (s.points.length > 0) {
      parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.8" points="${s.points.map(([t, v]) => `${ix(t).toFixed(1)},${iy(v).toFixed(1)}`).join(' ')}"/>`);
    }
    const lx = x0 + pad.left + i * 130;
    parts.push(`<rect x="${lx}" y="${y0 + H - 16}" width="10" height="10" fill="${s.color}"/>`);
    parts.push(`<text x="${lx + 14}" y="${y0 + H - 7}" font-size="11">${esc(s.label)}</text>`);
  });
  return parts.join('\n');
}

const caption = `rlock/otel → Prometheus, scraped every 1 s for ${durationS} s (${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, Node ${process.versions.node}): 9 workers contend for 3 locks, 4 share 2 permits, a hold lost every 4 s`;
const svg = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W + 10}" height="${2 * H + 40}" font-family="sans-serif">`,
  `<rect width="100%" height="100%" fill="#f7f7f7"/>`,
  panel(panels[0]!, 0, 0),
  panel(panels[1]!, W + 10, 0),
  panel(panels[2]!, 0, H + 10),
  panel(panels[3]!, W + 10, H + 10),
  `<text x="6" y="${2 * H + 32}" font-size="10.5" fill="#444">${esc(caption)}</text>`,
  '</svg>',
].join('\n');
writeFileSync(out, `${svg}\n`);
console.log(`wrote ${out.pathname} from ${scrapes.length} scrapes`);
