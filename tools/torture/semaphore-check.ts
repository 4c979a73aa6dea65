/**
 * The checks of the torture tool's `semaphore` kind (see docs/torture.md):
 * - never more permits out than the limit: the permits of the holds believed at once (each from
 *   its acquisition to where the checks end it: checker.ts' effective end) never add up to more
 *   than SEMAPHORE_LIMIT;
 * - every waiter that fits is woken: a wait that ran out although its request fitted, by an upper
 *   bound of what Redis had out, for WAKE_MS on end with no rival waiting (any other caller on a
 *   fair semaphore; on a non-fair one, a caller whose worker a fault hit: it may have been
 *   promised the permits and be unable to take them), is a missed wake-up. Stretches near a fault
 *   that can hold its wake-up back legitimately are not judged (see `holdsBack`).
 */
import type { Hold, Violation } from './checker.js';
import type { FaultRecord, TaggedEvent } from './faults.js';
import { TIMING } from './schedule.js';
import { SEMAPHORE_LIMIT } from './semaphore-kind.js';

/** A waiter that fitted this long without being woken missed its wake-up, ms. */
export const WAKE_MS = 1_000;
/**
 * After a fault on the waiter's own worker or on the server, how long its wake-up may be held
 * back: a waiter that heard nothing asks again by its own timer, at the latest when the earliest
 * lease ends; plus a margin, ms.
 */
const FAULT_SHADOW_MS = TIMING.maxTtl + 1_000;
/**
 * A rival blocks until this long after its wait ended: permits a notice promised it stay
 * promised up to a second (a client frozen, cut off or gone cannot hand them back), and a waiter
 * skipped meanwhile asks again by its own timer, at the latest when the earliest lease ends, ms.
 */
const RIVAL_SHADOW_MS = 1_000 + FAULT_SHADOW_MS;
/** What Redis may still count for a call after its worker last heard of it, ms. */
const SETTLE_MS = 1_000;

type WaitEvent = Extract<TaggedEvent['event'], { type: 'wait' }>;

export interface SemaphoreStats {
  holds: number;
  /** The most permits believed out at once on any semaphore. */
  maxOut: number;
  /** Waits that ran out, and how many of them the wake-up check could judge (a quiet stretch long enough). */
  timedOut: number;
  judged: number;
}

interface Span {
  readonly from: number;
  readonly to: number;
  readonly permits: number;
}

/** Never more than the limit believed out at once, per semaphore. */
function checkLimit(holds: readonly Hold[], stats: SemaphoreStats, violations: Violation[]): void {
  const byName = new Map<string, Hold[]>();
  for (const hold of holds) {
    if (hold.effEnd! <= hold.start) continue;
    byName.set(hold.names[0]!, [...(byName.get(hold.names[0]!) ?? []), hold]);
  }
  for (const [name, list] of byName) {
    list.sort((a, b) => a.start - b.start);
    const open: Hold[] = [];
    for (const hold of list) {
      for (let i = open.length - 1; i >= 0; i -= 1) if (open[i]!.effEnd! <= hold.start) open.splice(i, 1);
      open.push(hold);
      const out = open.reduce((sum, h) => sum + (h.permits ?? 1), 0);
      stats.maxOut = Math.max(stats.maxOut, out);
      if (out <= SEMAPHORE_LIMIT) continue;
      const told = open.some((h) => h !== hold && h.endKind === 'lost');
      violations.push({
        kind: told ? 'told-late' : 'exclusion',
        name,
        at: hold.start,
        until: Math.min(...open.map((h) => h.effEnd!)),
        message:
          `semaphore "${name}": ${out} permits believed out at once (limit ${SEMAPHORE_LIMIT}) when hold ${hold.id} (${hold.owner}) began: ` +
          open.map((h) => `${h.id} ${h.permits ?? 1}p ended by ${h.endKind ?? 'nothing'}${h.cutBy ? ` (${h.cutBy})` : ''}`).join(', '),
      });
    }
  }
}

/** Until when Redis may still count a hold's permits: an upper bound, from its acquiring call on. */
function redisSpan(hold: Hold, answeredAt: number | undefined): Span {
  const permits = hold.permits ?? 1;
  // Released and answered: gone by the answer. Otherwise (lost, died, failed or unanswered release): its lease ends.
  if (hold.endKind === 'release' && hold.releaseOk === true && answeredAt !== undefined) return { from: hold.t0, to: answeredAt, permits };
  return { from: hold.t0, to: (hold.end ?? Infinity) + hold.ttl + SETTLE_MS, permits };
}

/** Whether a fault hit `worker` (its proxies or its process) during [from, to). */
function hit(worker: number, from: number, to: number, log: readonly FaultRecord[]): boolean {
  return log.some((r) => {
    if (r.error !== undefined || r.start >= to || (r.end ?? Infinity) <= from) return false;
    const f = r.fault;
    if ('server' in f) return false;
    return 'worker' in f ? f.worker === worker : f.proxies.some((p) => p.worker === worker);
  });
}

/** When a fault's effect is over: a killed worker stays dead, a restarted server down, for its duration after its record ends. */
function faultOver(r: FaultRecord): number {
  const end = r.end ?? Infinity;
  return r.fault.type === 'sigkill' || r.fault.type === 'redis-restart' ? end + r.fault.duration : end;
}

/**
 * Whether a fault can hold back the wake-up of a waiter on `worker`: one on its own proxies or
 * process, on the server, or any worker killed (a grant it never reported holds its permits
 * until the lease ends).
 */
function holdsBack(worker: number, r: FaultRecord): boolean {
  if (r.error !== undefined) return false;
  const f = r.fault;
  if ('server' in f) return f.server === 'main';
  if (f.type === 'sigkill') return true;
  return 'worker' in f ? f.worker === worker : f.proxies.some((p) => p.worker === worker);
}

/** Every waiter that fits is woken: no wait runs out after fitting WAKE_MS in a quiet stretch. */
function checkWakeUps(holds: readonly Hold[], events: readonly TaggedEvent[], log: readonly FaultRecord[], stats: SemaphoreStats, violations: Violation[]): void {
  const answered = new Map<string, number>();
  const waits: WaitEvent[] = [];
  const workerOf = new Map<WaitEvent, number>();
  for (const { event, worker } of events) {
    if (event.type === 'released' && event.ok) answered.set(event.hold, event.t);
    if (event.type === 'wait' && event.kind === 'semaphore') {
      waits.push(event);
      workerOf.set(event, worker);
    }
  }
  const spansOf = new Map<string, Span[]>();
  const add = (name: string, span: Span): void => void spansOf.set(name, [...(spansOf.get(name) ?? []), span]);
  for (const hold of holds) add(hold.names[0]!, redisSpan(hold, answered.get(hold.id)));
  // A call that did not acquire may still have been granted in Redis and given back just after.
  for (const wait of waits) if (wait.outcome !== 'acquired') add(wait.names[0]!, { from: wait.t0, to: wait.t + SETTLE_MS, permits: wait.permits ?? 1 });

  for (const wait of waits) {
    if (wait.outcome !== 'timeout') continue;
    stats.timedOut += 1;
    const name = wait.names[0]!;
    const need = wait.permits ?? 1;
    const worker = workerOf.get(wait)!;
    // Its first attempt, and the last moments (an answer on its way), are not judged.
    const from = wait.t0 + 200;
    const to = wait.t - 200;
    if (to - from < WAKE_MS) continue;
    const others = (spansOf.get(name) ?? []).filter((s) => !(s.from === wait.t0 && s.permits === need && s.to === wait.t + SETTLE_MS));
    // Stretches not judged: a rival waiting, or a fault that may hold this wake-up back.
    const fair = name.startsWith('sem-fair-');
    const blocks = waits
      .filter((w) => w !== wait && w.names[0] === name && (fair || hit(workerOf.get(w)!, w.t0, w.t + 1_000, log)))
      .map((w) => ({ from: w.t0, to: w.t + RIVAL_SHADOW_MS }));
    for (const r of log) if (holdsBack(worker, r)) blocks.push({ from: r.start, to: faultOver(r) + FAULT_SHADOW_MS });
    const cuts = new Set<number>([from, to]);
    for (const x of [...others, ...blocks]) for (const t of [x.from, x.to]) if (t > from && t < to) cuts.add(t);
    const times = [...cuts].sort((a, b) => a - b);
    let quietSince: number | undefined;
    let fitSince: number | undefined;
    let judged = false;
    for (let i = 0; i < times.length - 1; i += 1) {
      const a = times[i]!;
      const b = times[i + 1]!;
      const mid = (a + b) / 2;
      const out = others.reduce((sum, x) => (x.from <= mid && x.to > mid ? sum + x.permits : sum), 0);
      const quiet = !blocks.some((x) => x.from <= mid && x.to > mid);
      quietSince = quiet ? (quietSince ?? a) : undefined;
      fitSince = quiet && out + need <= SEMAPHORE_LIMIT ? (fitSince ?? a) : undefined;
      if (quietSince !== undefined && b - quietSince >= WAKE_MS) judged = true;
      if (fitSince !== undefined && b - fitSince >= WAKE_MS) {
        violations.push({
          kind: 'missed-wake',
          name,
          at: fitSince,
          until: wait.t,
          message:
            `semaphore "${name}": a wait for ${need} permit(s) (op ${wait.op}, budget ${wait.budget} ms) ran out although at most ` +
            `${out} of ${SEMAPHORE_LIMIT} were out for ${(b - fitSince).toFixed(0)} ms of it, with no rival waiting and no fault near`,
        });
        break;
      }
    }
    if (judged) stats.judged += 1;
  }
}

/** The semaphore checks over the whole run; returns their figures for the report. */
export function checkSemaphores(
  allHolds: Iterable<Hold>,
  events: readonly TaggedEvent[],
  log: readonly FaultRecord[],
  violations: Violation[],
): SemaphoreStats {
  const holds = [...allHolds].filter((hold) => hold.kind === 'semaphore');
  const stats: SemaphoreStats = { holds: holds.length, maxOut: 0, timedOut: 0, judged: 0 };
  checkLimit(holds, stats, violations);
  checkWakeUps(holds, events, log, stats, violations);
  return stats;
}
