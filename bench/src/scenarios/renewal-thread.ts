import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { adapterLabel } from '../adapters/adapter.js';
import { median, shuffled } from '../stats.js';
import { rlockValues, num, type Cell, type Row, type Scenario } from './scenario.js';

const SIZES = {
  full: { rounds: 3, holds: 1_000, windowMs: 2_000, heldWindowMs: 1_500 },
  quick: { rounds: 1, holds: 200, windowMs: 1_000, heldWindowMs: 500 },
};
/** The watchdogTimeout of the start-up and renewal phases: a renewal round every 100 ms. */
const RENEW_LEASE_MS = 300;
/** The lease of the held phase: its first renewal falls after the window. */
const HELD_LEASE_MS = 30_000;
/** Idle time before the memory is read, ms: the thread is connected and quiet by then. */
const IDLE_MS = 700;
/** The longest one probe may take, ms. */
const PROBE_TIMEOUT_MS = 45_000;
const PROBE = fileURLToPath(new URL('../renewal-thread/probe.mjs', import.meta.url));

/** What probe.mjs measured over a window. */
interface Window {
  readonly holds: number;
  readonly leaseMs: number;
  readonly elapsedMs: number;
  readonly renewals: number;
  /** process.cpuUsage() user + sys: every thread of the process. */
  readonly processUs: number;
  /** The main thread alone (Linux schedstat; NaN elsewhere). */
  readonly mainUs: number;
  /** The renewal thread alone (0 without it). */
  readonly threadUs: number;
  readonly sentMain: Record<string, number>;
  readonly sentThread: Record<string, number>;
  readonly serverCalls: Record<string, number>;
  readonly serverCpuUs: number;
}

/** One probe.mjs run: one fresh process, the thread on or off. */
interface ProbeResult {
  readonly thread: boolean;
  readonly startup: {
    readonly constructMs: number;
    readonly acquireMs: number;
    readonly threadCalledMs: number | null;
    readonly threadUpMs: number | null;
    readonly firstRenewalMs: number | null;
    readonly threadFirstScriptMs: number | null;
    readonly threadRenewalMs: number | null;
  };
  readonly memory: NodeJS.MemoryUsage;
  readonly renew: Window;
  readonly held: Window;
  readonly closeMs: number;
  readonly lost: number;
  /** Holds lost, by `phase:reason`. */
  readonly lostBy: Record<string, number>;
  readonly errors: readonly string[];
}

/** Runs probe.mjs in a fresh node (no TypeScript loader: the thread would inherit it). */
function runProbe(config: Record<string, unknown>): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', PROBE, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').at(-1);
      if (code !== 0 || !line) {
        reject(new Error(`the probe exited (${signal ?? code}): ${err.trim().split('\n').slice(-3).join(' ')}`));
        return;
      }
      resolve(JSON.parse(line) as ProbeResult);
    });
  });
}

const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
const mid = (values: readonly (number | null)[]): number | null => {
  const known = values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
  return known.length === 0 ? null : median(known);
};
const MB = 2 ** 20;

/** The figures of one mode over its rounds: medians. */
function summarize(results: readonly ProbeResult[]): Record<string, Cell> {
  const of = (pick: (result: ProbeResult) => number | null): number | null => mid(results.map(pick));
  const perRenewal = (pick: (window: Window) => number) => of((result) => pick(result.renew) / result.renew.renewals);
  const perSecondHeld = (pick: (window: Window) => number) => of((result) => pick(result.held) / result.held.elapsedMs);
  return {
    constructMs: of((result) => result.startup.constructMs),
    acquireMs: of((result) => result.startup.acquireMs),
    threadCalledMs: of((result) => result.startup.threadCalledMs),
    threadUpMs: of((result) => result.startup.threadUpMs),
    firstRenewalMs: of((result) => result.startup.firstRenewalMs),
    threadRenewalMs: of((result) => result.startup.threadRenewalMs),
    rssMb: of((result) => result.memory.rss / MB),
    heapMb: of((result) => result.memory.heapUsed / MB),
    arrayBuffersKb: of((result) => result.memory.arrayBuffers / 1024),
    renewalsPerSec: of((result) => (result.renew.renewals / result.renew.elapsedMs) * 1000),
    cpuUsPerRenewal: perRenewal((window) => window.processUs),
    mainCpuUsPerRenewal: perRenewal((window) => window.mainUs),
    threadCpuUsPerRenewal: perRenewal((window) => window.threadUs),
    sentPer1kRenewals: perRenewal((window) => (sum(window.sentMain) + sum(window.sentThread)) * 1000),
    serverCpuUsPerRenewal: perRenewal((window) => window.serverCpuUs),
    heldCpuMsPerS: perSecondHeld((window) => window.processUs),
    heldMainCpuMsPerS: perSecondHeld((window) => window.mainUs),
    closeMs: of((result) => result.closeMs),
    lost: results.reduce((total, result) => total + result.lost, 0),
  };
}

/**
 * 9. What `renewalThread` costs rlock on ioredis: the same client with the thread and without,
 * each in fresh processes (probe.mjs). Start-up (to the thread's first renewal), idle memory, CPU
 * per hold renewal (the process, and the main thread and the renewal thread apart), commands and
 * server CPU per renewal, and the CPU of holding with no renewal due.
 */
export const renewalThread: Scenario = {
  id: '9',
  title: 'What the renewal thread costs',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const rlock = context.adapters.find((adapter) => adapter.id === 'rlock');
    const results: Record<'off' | 'thread', ProbeResult[]> = { off: [], thread: [] };
    let failure: string | undefined;
    if (rlock) {
      const config = { url: context.url, holds: size.holds, leaseMs: RENEW_LEASE_MS, windowMs: size.windowMs, heldLeaseMs: HELD_LEASE_MS, heldWindowMs: size.heldWindowMs, idleMs: IDLE_MS };
      try {
        for (let round = 0; round < size.rounds; round += 1) {
          for (const mode of shuffled(['off', 'thread'] as const, context.random)) {
            const result = await runProbe({ ...config, thread: mode === 'thread' });
            results[mode].push(result);
            const { startup, memory, renew } = result;
            context.log(
              `  ${mode === 'thread' ? 'thread on ' : 'thread off'}: ` +
                `${mode === 'thread' ? `thread up ${startup.threadUpMs?.toFixed(0)} ms, renewing ${startup.threadRenewalMs?.toFixed(0)} ms; ` : `first renewal ${startup.firstRenewalMs?.toFixed(0)} ms; `}` +
                `RSS ${(memory.rss / MB).toFixed(1)} MB, heap ${(memory.heapUsed / MB).toFixed(2)} MB; ` +
                `${renew.renewals} renewals, ${(renew.processUs / renew.renewals).toFixed(2)} µs CPU each` +
                `${result.lost > 0 ? `, LOST ${JSON.stringify(result.lostBy)}` : ''}${result.errors.length > 0 ? `, errors: ${result.errors.join('; ')}` : ''}`,
            );
          }
        }
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
        context.log(`  failed: ${failure}`);
      }
    }

    const rows: Row[] = [];
    if (rlock) {
      const off = failure === undefined ? summarize(results.off) : { error: failure };
      const on = failure === undefined ? summarize(results.thread) : { error: failure };
      if (failure === undefined) {
        // What turning the thread on adds, medians against medians.
        const delta = (key: string, scale = 1): number => (num(on[key]) - num(off[key])) * scale;
        Object.assign(on, { rssDeltaMb: delta('rssMb'), heapDeltaKb: delta('heapMb', 1024), arrayBuffersDeltaKb: delta('arrayBuffersKb') });
        Object.assign(off, { rssDeltaMb: null, heapDeltaKb: null, arrayBuffersDeltaKb: null });
      }
      rows.push(
        { id: 'rlock', label: adapterLabel({ ...rlock, variant: 'watchdog on the event loop' }), values: off },
        { id: 'rlock-renewal-thread', label: adapterLabel({ ...rlock, variant: 'renewalThread' }), values: on },
      );
    }
    const offValues = rlockValues(rows);
    const onValues = rlockValues(rows, 'rlock-renewal-thread');
    const renewalRounds = (size.windowMs / (RENEW_LEASE_MS / 3)).toFixed(0);
    return {
      id: this.id,
      title: this.title,
      setup:
        `rlock on ioredis, one LockClient with \`renewalThread\` (connect module: a plain ioredis client) and without, each in ` +
        `${size.rounds} fresh process(es) per mode (plain node, no TypeScript loader), the modes' order shuffled per round; ` +
        `medians over the rounds. Start-up: watchdogTimeout ${RENEW_LEASE_MS} ms, ms from \`new LockClient()\` (its connections ` +
        'already connected) to: the constructor returning; a watchdog-mode acquire() resolving; the thread calling the connect ' +
        'module and its connection being ready (seen by the connect module); the first `renewed` event; and, with the thread, ' +
        'the first renewal the thread made (the first `renewed` after the thread’s first script call). The thread renews ' +
        'once as soon as it is up, then every third of a lease; the main thread renews until it is up. Memory: ' +
        `after that hold's release, idle ${IDLE_MS} ms, two full GCs (main thread only), process.memoryUsage(); Δ = with − without. ` +
        `Renewal: ${size.holds.toLocaleString('en')} watchdog-mode holds renewed every ${RENEW_LEASE_MS / 3} ms, over ` +
        `${size.windowMs / 1000} s (about ${renewalRounds} rounds): process CPU (user+sys, every thread) per hold renewal (one ` +
        '`renewed` event), the main thread’s and the renewal thread’s apart (Linux schedstat), commands sent by all ' +
        'connections per 1,000 renewals, server CPU per renewal. Held: the same holds on a client with ' +
        `watchdogTimeout ${HELD_LEASE_MS / 1000} s (no renewal due in the window): process CPU, ms per s, over ` +
        `${size.heldWindowMs / 1000} s.`,
      columns: [
        { key: 'constructMs', header: 'new LockClient ms', digits: 2 },
        { key: 'acquireMs', header: 'first acquire ms', digits: 1 },
        { key: 'threadCalledMs', header: 'thread started ms', digits: 1 },
        { key: 'threadUpMs', header: 'thread up ms', digits: 1 },
        { key: 'firstRenewalMs', header: 'first renewal ms', digits: 1 },
        { key: 'threadRenewalMs', header: 'first thread renewal ms', digits: 1 },
        { key: 'rssMb', header: 'RSS MB', digits: 1 },
        { key: 'rssDeltaMb', header: 'RSS Δ MB', digits: 1 },
        { key: 'heapDeltaKb', header: 'main heap Δ KB', digits: 0 },
        { key: 'cpuUsPerRenewal', header: 'CPU µs/renewal', digits: 2 },
        { key: 'mainCpuUsPerRenewal', header: 'main thread µs/renewal', digits: 2 },
        { key: 'threadCpuUsPerRenewal', header: 'renewal thread µs/renewal', digits: 2 },
        { key: 'sentPer1kRenewals', header: 'sent/1k renewals', digits: 1 },
        { key: 'serverCpuUsPerRenewal', header: 'server CPU µs/renewal', digits: 2 },
        { key: 'heldCpuMsPerS', header: 'held CPU ms/s', digits: 2 },
        { key: 'lost', header: 'lost', digits: 0 },
      ],
      rows,
      headline: { key: 'cpuUsPerRenewal', higherIsBetter: false },
      targets:
        offValues && onValues
          ? [
              {
                target: `no hold lost while ${size.holds.toLocaleString('en')} holds are renewed every ${RENEW_LEASE_MS / 3} ms (thread on and off)`,
                measured: `${String(offValues.lost)} off, ${String(onValues.lost)} on`,
                met: offValues.lost === 0 && onValues.lost === 0,
              },
            ]
          : [],
      notes: [
        ...(rlock ? [] : ['Runs when --libraries names rlock.']),
        'The bench’s other scenarios run under tsx; this one’s probes run plain node, so their RSS is not comparable with a tsx process’s.',
        'Main thread and renewal thread CPU come from /proc/self/task/*/schedstat (Linux); the rest of the process CPU is V8’s and libuv’s helper threads.',
      ],
      detail: { sizes: size, renewLeaseMs: RENEW_LEASE_MS, heldLeaseMs: HELD_LEASE_MS, rounds: results },
    };
  },
};
