/**
 * The seeded PRNG and the fault schedule. The schedule is a pure function of the seed and the
 * run's shape (seconds, processes, clients, servers): a seed replays the same faults at the same
 * moments against the same targets. Workers draw their operations from PRNGs seeded from it too.
 */

/** sfc32 seeded through splitmix32: small, fast, and good enough for choosing faults. */
export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i += 1) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t / 2 ** 32;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Prng.pick: nothing to pick from');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A key of `weights`, chosen in proportion to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let x = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, w] of entries) {
      x -= w;
      if (x < 0) return key;
    }
    return entries.at(-1)![0];
  }
}

/** A seed for one worker incarnation, from the run's seed. */
export function workerSeed(seed: number, worker: number, incarnation: number): number {
  return (Math.imul(seed ^ 0x5bd1e995, 31) + worker * 7919 + incarnation * 104729) >>> 0;
}

/** Timing of the workloads, which the schedule's durations are drawn around (ms). */
export const TIMING = {
  /** `watchdogTimeout` of every LockClient: watchdog-mode holds live this long without renewal. */
  watchdogTimeout: 1_500,
  /** `fairLockWaitTimeout` of every LockClient. */
  fairLockWaitTimeout: 1_500,
  /** Fixed leases are drawn from [min, max]. */
  leaseMin: 400,
  leaseMax: 2_500,
  /** The longest any hold lives in Redis without renewal. */
  maxTtl: 2_500,
} as const;

/** `main`: the server of every kind but RedLock; 0–4: the RedLock masters. */
export type ServerId = 'main' | number;

/** One client's proxy in front of one server. */
export interface ProxyTarget {
  readonly worker: number;
  readonly client: number;
  readonly server: ServerId;
}

export type FaultType =
  | 'latency'
  | 'blackhole-short'
  | 'blackhole-long'
  | 'swallow'
  | 'reset'
  | 'sigstop'
  | 'sigkill'
  | 'redis-restart'
  | 'redis-crash-aof';

export const FAULT_TYPES: readonly FaultType[] = [
  'latency',
  'blackhole-short',
  'blackhole-long',
  'swallow',
  'reset',
  'sigstop',
  'sigkill',
  'redis-restart',
  'redis-crash-aof',
];

export type Fault =
  /** Delays every chunk on the proxies by `up`/`down` ms for `duration` ms. */
  | { type: 'latency'; at: number; duration: number; proxies: ProxyTarget[]; up: number; down: number }
  /** Silence on the proxies for `duration` ms (< the leases, or > them); `drop`: bytes are lost, so it ends with a reset. */
  | { type: 'blackhole-short' | 'blackhole-long'; at: number; duration: number; proxies: ProxyTarget[]; drop: boolean }
  /** The next `n` replies on the proxy are swallowed, then the socket is reset (ioredis resends); optionally silence after, `duration` ms. */
  | { type: 'swallow'; at: number; duration: number; proxies: ProxyTarget[]; n: number; thenBlackhole: boolean }
  /** Every connection through the proxies is reset. */
  | { type: 'reset'; at: number; duration: 0; proxies: ProxyTarget[] }
  /** The worker is frozen (SIGSTOP) for `duration` ms, longer than any lease, then SIGCONT. */
  | { type: 'sigstop'; at: number; duration: number; worker: number }
  /** The worker is killed (SIGKILL) and started again `duration` ms later. */
  | { type: 'sigkill'; at: number; duration: number; worker: number }
  /**
   * The server restarts. `redis-restart`: SIGTERM, its data gone (no persistence); a RedLock
   * master then stays down `duration` ms (longer than any lease: a delayed restart). `redis-crash-aof`:
   * SIGKILL and restart from its AOF (appendfsync always), at once.
   */
  | { type: 'redis-restart' | 'redis-crash-aof'; at: number; duration: number; server: ServerId };

export interface ScheduleShape {
  readonly seconds: number;
  readonly processes: number;
  readonly clients: number;
  readonly servers: readonly ServerId[];
}

const WEIGHTS: Record<FaultType, number> = {
  latency: 5,
  'blackhole-short': 4,
  'blackhole-long': 3,
  swallow: 4,
  reset: 4,
  sigstop: 2,
  sigkill: 2,
  'redis-restart': 1,
  'redis-crash-aof': 1,
};

/** Mean gap between two faults, ms. */
const MEAN_GAP_MS = 1_100;
/** No fault starts in the first second, nor ends less than this before the end of the run. */
const QUIET_END_MS = 500;

const proxyKey = (p: ProxyTarget): string => `${p.worker}/${p.client}/${p.server}`;

/**
 * The faults of a run, in time order. Faults on one target never overlap (a heal must not cut
 * another fault short); faults on different targets do, which is where locks fail.
 */
export function makeSchedule(seed: number, shape: ScheduleShape): Fault[] {
  const rng = new Prng(seed);
  const endMs = shape.seconds * 1_000 - QUIET_END_MS;
  const busy = new Map<string, number>();
  const free = (key: string, at: number): boolean => (busy.get(key) ?? 0) <= at;
  const faults: Fault[] = [];
  const workers = Array.from({ length: shape.processes }, (_, w) => w);
  for (let at = 1_000 + rng.int(0, MEAN_GAP_MS); at < endMs; at += rng.int(MEAN_GAP_MS / 4, (MEAN_GAP_MS * 7) / 4)) {
    const type = rng.weighted(WEIGHTS);
    const worker = rng.pick(workers);
    const client = rng.int(0, shape.clients - 1);
    const server = rng.pick(shape.servers);
    // One proxy, or (a partition of the whole client) all of the client's proxies.
    const proxies: ProxyTarget[] =
      type !== 'swallow' && rng.chance(0.3)
        ? shape.servers.map((s) => ({ worker, client, server: s }))
        : [{ worker, client, server }];
    const proxiesFree = proxies.every((p) => free(proxyKey(p), at)) && free(`w${worker}`, at);
    let fault: Fault;
    switch (type) {
      case 'latency':
        fault = { type, at, duration: rng.int(300, 3_000), proxies, up: rng.int(0, 600), down: rng.int(50, 1_500) };
        break;
      case 'blackhole-short':
        fault = { type, at, duration: rng.int(100, TIMING.leaseMin), proxies, drop: rng.chance(0.3) };
        break;
      case 'blackhole-long':
        fault = { type, at, duration: rng.int(TIMING.maxTtl, TIMING.maxTtl * 2), proxies, drop: rng.chance(0.3) };
        break;
      case 'swallow': {
        const thenBlackhole = rng.chance(0.3);
        fault = { type, at, duration: thenBlackhole ? rng.int(200, 2_500) : 0, proxies, n: rng.int(1, 3), thenBlackhole };
        break;
      }
      case 'reset':
        fault = { type, at, duration: 0, proxies };
        break;
      case 'sigstop':
        fault = { type, at, duration: rng.int(TIMING.maxTtl + 300, TIMING.maxTtl * 2), worker };
        break;
      case 'sigkill':
        fault = { type, at, duration: rng.int(200, 1_500), worker };
        break;
      case 'redis-restart':
        fault = { type, at, duration: server === 'main' ? 0 : TIMING.maxTtl + 500, server };
        break;
      case 'redis-crash-aof':
        fault = { type, at, duration: 0, server };
        break;
    }
    const end = fault.at + fault.duration + 50;
    if (end > endMs) continue;
    if ('proxies' in fault) {
      if (!proxiesFree) continue;
      for (const p of fault.proxies) busy.set(proxyKey(p), end);
    } else if ('worker' in fault) {
      // A worker's faults never overlap, nor overlap faults on its proxies.
      const mine = [...busy.entries()].filter(([key]) => key === `w${fault.worker}` || key.startsWith(`${fault.worker}/`));
      if (mine.some(([, until]) => until > at)) continue;
      busy.set(`w${fault.worker}`, end);
    } else {
      // A server restarts at most once at a time, and waits for the previous restart's dust to settle.
      if (!free(`s${fault.server}`, at)) continue;
      busy.set(`s${fault.server}`, end + 2_000);
    }
    faults.push(fault);
  }
  return faults;
}

/** One line per fault, for the report of a failed run. */
export function describeFault(fault: Fault): string {
  const at = `+${(fault.at / 1_000).toFixed(3)}s`;
  const where =
    'proxies' in fault
      ? fault.proxies.map((p) => `w${p.worker}c${p.client}→${p.server}`).join(',')
      : 'worker' in fault
        ? `worker ${fault.worker}`
        : `server ${fault.server}`;
  const extra =
    fault.type === 'latency'
      ? ` up=${fault.up} down=${fault.down}`
      : fault.type === 'swallow'
        ? ` n=${fault.n}${fault.thenBlackhole ? ' then blackhole' : ''}`
        : fault.type === 'blackhole-short' || fault.type === 'blackhole-long'
          ? fault.drop
            ? ' drop'
            : ' hold'
          : '';
  return `${at} ${fault.type} ${where} for ${fault.duration} ms${extra}`;
}
