// Reads a Prometheus text exposition (what /metrics serves) into samples.

/** One sample: metric name, labels, value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `match`. */
export function sumOf(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);
}

/**
 * The `q` quantile of a histogram's observations between two scrapes, from the cumulative bucket
 * counts (`le` → count) of each, interpolated linearly within the bucket as PromQL's
 * histogram_quantile does. NaN when nothing was observed in between.
 */
export function quantileBetween(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const delta = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const total = delta.at(-1) ?? 0;
  if (total <= 0) return NaN;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i += 1) {
    if (delta[i]! >= rank) {
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      const upper = bounds[i] === Infinity ? lower : bounds[i]!;
      const below = i === 0 ? 0 : delta[i - 1]!;
      const inBucket = delta[i]! - below;
      return inBucket <= 0 ? upper : lower + ((upper - lower) * (rank - below)) / inBucket;
    }
  }
  return bounds.at(-2) ?? NaN;
}

/** The cumulative bucket counts (`le` → count) of histogram `name` summed over the samples matching `match`. */
export function bucketsOf(samples: Sample[], name: string, match: Record<string, string> = {}): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  return buckets;
}
