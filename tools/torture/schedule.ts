/**
 * The seeded PRNG and the fault schedule. The schedule is a pure function of the seed and the
 * run's shape (seconds, processes, clients, servers): a seed replays the same faults at the same
 * moments against the same targets. Workers draw their operations from PRNGs seeded from it too.
 */

import type { ClientSetup } from './events.js';

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
  /** The longest any hold lives in Redis without renewal (but the long leases below). */
  maxTtl: 2_500,
  /**
   * The fixed leases of some bursts wider than the request window (burst.ts): longer than the 5 s
   * a release waits for its answer, so that a release left waiting for room times out while its
   * hold still stands.
   */
  longLeaseMin: 8_000,
  longLeaseMax: 12_000,
  /**
   * `renewalThread.maxStall` of the clients with a renewal thread (ClientSetup.thread): a loop
   * blocked this long lets the thread stop renewing. A stall (stall.ts) is 0.5–3 leases: most
   * end well before it, a third up to 400 ms past it, before a hold the thread let go can run out
   * in Redis, so its holder is told `stalled` before any rival can take it.
   */
  maxStall: 4_000,
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
  | 'redis-crash-aof'
  | 'refuse-scripts';

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
  'refuse-scripts',
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
  | { type: 'redis-restart' | 'redis-crash-aof'; at: number; duration: number; server: ServerId }
  /**
   * The server refuses scripts (EVAL, EVALSHA) to the run's ACL user for `duration` ms (NOPERM,
   * before anything runs), then allows them again: the clients connected as that user
   * (ClientSetup.acl) get every rlock call refused meanwhile.
   */
  | { type: 'refuse-scripts'; at: number; duration: number; server: ServerId };

export interface ScheduleShape {
  readonly seconds: number;
  readonly processes: number;
  readonly clients: number;
  readonly servers: readonly ServerId[];
}

/** The faults of the main stream (refusals come from a stream of their own: see makeSchedule). */
type StreamFault = Exclude<FaultType, 'refuse-scripts'>;

const WEIGHTS: Record<StreamFault, number> = {
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
  faults.push(...extraFaults(seed, shape, endMs, faults));
  return faults.sort((a, b) => a.at - b.at);
}

/** Mean gap between two faults of the second stream, ms. */
const EXTRA_GAP_MS = 3_000;

/** Whether two faults may not overlap in time: one target, or a worker and one of its proxies. */
function conflicts(a: Fault, b: Fault): boolean {
  const proxies = (f: Fault): string[] => ('proxies' in f ? f.proxies.map(proxyKey) : []);
  const worker = (f: Fault): number | undefined => ('worker' in f ? f.worker : undefined);
  if (proxies(a).some((key) => proxies(b).includes(key))) return true;
  if (worker(a) !== undefined && 'proxies' in b && b.proxies.some((p) => p.worker === worker(a))) return true;
  if (worker(b) !== undefined && 'proxies' in a && a.proxies.some((p) => p.worker === worker(b))) return true;
  return a.type === 'refuse-scripts' && b.type === 'refuse-scripts' && a.server === b.server;
}

/**
 * The second stream, from a PRNG of its own (so the faults above stay what a seed always gave):
 * refusals of scripts to the ACL user on a server, and silences of one client's proxy to the
 * main server longer than the 5 s a release waits for its answer, so that a burst's calls waiting
 * for room in the request window outlast it. None overlaps a fault on the same target, nor a
 * fault on the worker of a proxy it silences.
 */
function extraFaults(seed: number, shape: ScheduleShape, endMs: number, first: readonly Fault[]): Fault[] {
  const rng = new Prng((seed ^ 0x27d4eb2f) >>> 0);
  const taken = [...first];
  const clash = (fault: Fault): boolean =>
    taken.some((t) => t.at < fault.at + fault.duration + 50 && fault.at < t.at + t.duration + 50 && conflicts(t, fault));
  const faults: Fault[] = [];
  const masters = shape.servers.filter((s) => s !== 'main');
  const hasMain = shape.servers.includes('main');
  for (let at = 1_000 + rng.int(0, EXTRA_GAP_MS); at < endMs; at += rng.int(EXTRA_GAP_MS / 2, (EXTRA_GAP_MS * 3) / 2)) {
    let fault: Fault;
    if (!hasMain || rng.chance(0.35)) {
      const server: ServerId = hasMain && (masters.length === 0 || rng.chance(0.7)) ? 'main' : rng.pick(masters);
      // Mostly short; some outlast a release's 5 s wait for its answer.
      const duration = rng.chance(0.3) ? rng.int(5_500, 8_000) : rng.int(300, 3_000);
      fault = { type: 'refuse-scripts', at, duration, server };
    } else {
      const target = { worker: rng.int(0, shape.processes - 1), client: rng.int(0, shape.clients - 1), server: 'main' as const };
      fault = { type: 'blackhole-long', at, duration: rng.int(6_000, 9_000), proxies: [target], drop: rng.chance(0.3) };
    }
    if (at + fault.duration + 50 > endMs || clash(fault)) continue;
    taken.push(fault);
    faults.push(fault);
  }
  return faults;
}

/**
 * How each worker's LockClients connect (ClientSetup), from a PRNG of its own: about half use
 * rlock's own retries, about half connect as the ACL user; every run has at least one of each.
 * About half run a renewal thread (at least one, and one without when there are two or more),
 * unless `threads` is false.
 */
export function clientSetups(seed: number, processes: number, clients: number, threads = true): ClientSetup[][] {
  const rng = new Prng((seed ^ 0x165667b1) >>> 0);
  const setups = Array.from({ length: processes }, () =>
    Array.from({ length: clients }, () => ({ ownRetries: rng.chance(0.5), acl: rng.chance(0.5), thread: false })),
  );
  const all = setups.flat();
  if (!all.some((s) => s.ownRetries)) rng.pick(all).ownRetries = true;
  if (!all.some((s) => s.acl)) rng.pick(all).acl = true;
  // The renewal threads, from a PRNG of their own (the draws above stay what a seed gave): about
  // half the clients, at least one, and at least one without (its watchdog on its event loop).
  if (!threads) return setups;
  const draw = new Prng((seed ^ 0x3c6ef372) >>> 0);
  for (const setup of all) setup.thread = draw.chance(0.5);
  if (!all.some((s) => s.thread)) draw.pick(all).thread = true;
  if (all.length > 1 && all.every((s) => s.thread)) draw.pick(all).thread = false;
  return setups;
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
