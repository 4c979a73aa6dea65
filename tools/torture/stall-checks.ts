/**
 * The torture checks around stalls (stall.ts: a worker's event loop blocked by a busy loop while
 * its renewal threads renew some of its holds; see docs/torture.md):
 * - a stall is a *pause* of the worker, as a freeze (SIGSTOP) is: its event loop acts on nothing
 *   meanwhile, so a hold it had then that ends (lost, released) within WAKE_MARGIN_MS after it
 *   counts as ended when it began, waits do not count it, and the other checks take it as a freeze
 *   of the worker. Pauses of one worker that follow each other within WAKE_MARGIN_MS are one;
 * - except the holds a renewal thread renewed throughout (the stall event's `protected`), judged
 *   in full: they must be kept, or, when the stall outlasted maxStall, told `stalled` before
 *   anyone else gets the lock (exclusion, told-late). A fault on the hold's way to Redis (its
 *   client's proxies to its servers, the worker, those servers, a refusal of scripts to an ACL
 *   client) from a lease before the stall to its end may have cut the thread's renewals, which the
 *   blocked holder cannot hear of: such a hold is judged as the others (`disturbed`);
 * - `stalled-early`: a hold told `stalled` when its worker's loop had not been blocked (stalled
 *   or frozen) for maxStall less STALLED_SLACK_MS just before: the thread let it go too early.
 */
import type { Kind } from './args.js';
import { serversOf, QUIET_MS, WAKE_MARGIN_MS, type Hold, type Violation } from './checker.js';
import type { WorkerEvent } from './events.js';
import type { FaultRecord } from './faults.js';
import { TIMING } from './schedule.js';

export type StallEvent = Extract<WorkerEvent, { type: 'stall' }>;
export type ThreadEvent = Extract<WorkerEvent, { type: 'thread' }>;

/** A stall as the worker reported it. */
export interface StallRecord {
  readonly worker: number;
  readonly incarnation: number;
  readonly event: StallEvent;
}

/**
 * A `stalled` is told this soon after the pause it follows at the latest (the heartbeat after the
 * loop resumes reads it; a loaded machine may be slow to run it), ms.
 */
const STALLED_TOLD_MS = 2_000;
/**
 * How much shorter than maxStall the blocked loop may have been: the thread counts from the last
 * heartbeat (every 250 ms, late when the loop was busy before it blocked), ms.
 */
const STALLED_SLACK_MS = 1_000;

/** A stretch during which a worker's event loop ran nothing: a freeze, a stall, or several back to back. */
export interface Pause {
  readonly worker: number;
  readonly start: number;
  readonly end: number;
  /**
   * Where each of the pauses merged into this one began, in order ([start] for one): between
   * them the worker ran (up to WAKE_MARGIN_MS) and may have taken holds.
   */
  readonly starts: readonly number[];
  readonly froze: boolean;
  readonly stalled: boolean;
  /** The holds a renewal thread renewed throughout, undisturbed: judged in full. */
  readonly guarded: ReadonlySet<string>;
}

export interface StallStats {
  stalls: number;
  /** Stalls their worker was killed in (they end at the kill). */
  killed: number;
  /** Stalls longer than maxStall, and the longest. */
  pastMaxStall: number;
  longestMs: number;
  /** Holds renewed by a thread through a stall (counted per stall), and of those: judged in full, kept, told `stalled`, lost otherwise. */
  guarded: number;
  judged: number;
  kept: number;
  lostStalled: number;
  lostOther: number;
  /** Holds a fault on their way to Redis may have cut during the stall: judged as a frozen worker's. */
  disturbed: number;
  threadsUp: number;
  threadsDown: number;
  readonly downErrors: string[];
}

export function newStallStats(): StallStats {
  return {
    stalls: 0,
    killed: 0,
    pastMaxStall: 0,
    longestMs: 0,
    guarded: 0,
    judged: 0,
    kept: 0,
    lostStalled: 0,
    lostOther: 0,
    disturbed: 0,
    threadsUp: 0,
    threadsDown: 0,
    downErrors: [],
  };
}

/** Counts a worker's report of a stall or of a renewal thread. */
export function countStallEvent(event: StallEvent | ThreadEvent, worker: number, stats: StallStats): void {
  if (event.type === 'thread') {
    if (event.up) stats.threadsUp += 1;
    else {
      stats.threadsDown += 1;
      stats.downErrors.push(`w${worker}c${event.client} ${event.which}: ${event.error ?? 'down'}`);
    }
    return;
  }
  const ms = event.t - event.t0;
  stats.stalls += 1;
  if (ms > TIMING.maxStall) stats.pastMaxStall += 1;
  stats.longestMs = Math.max(stats.longestMs, ms);
}

/** Whether `r` may have cut the renewals of a hold of `kind` on `worker`'s client `client` during [from, to]. */
function disturbs(r: FaultRecord, worker: number, client: number, acl: boolean, kind: Kind, from: number, to: number): boolean {
  if (r.error !== undefined || r.start >= to) return false;
  // A swallow stays armed until replies come: it may catch a renewal's a while after it was set.
  const end = (r.end ?? Infinity) + (r.fault.type === 'swallow' ? QUIET_MS : 0);
  if (end <= from) return false;
  const f = r.fault;
  const servers = serversOf(kind);
  if ('proxies' in f) return f.proxies.some((p) => p.worker === worker && p.client === client && servers.includes(p.server));
  if ('worker' in f) return f.worker === worker;
  return servers.includes(f.server) && (f.type !== 'refuse-scripts' || acl);
}

/** The pauses of every worker: its freezes and its stalls, merged when one follows another within WAKE_MARGIN_MS. */
export function pausesOf(
  freezes: readonly FaultRecord[],
  stalls: readonly StallRecord[],
  holds: ReadonlyMap<string, Hold>,
  log: readonly FaultRecord[],
  stats: StallStats,
): Pause[] {
  const single: Pause[] = [];
  for (const r of freezes) {
    if (r.fault.type !== 'sigstop') continue;
    single.push({ worker: r.fault.worker, start: r.start, end: r.end!, starts: [r.start], froze: true, stalled: false, guarded: new Set() });
  }
  for (const { worker, event } of stalls) {
    const guarded = new Set<string>();
    for (const p of event.protected) {
      stats.guarded += 1;
      const hold = holds.get(p.hold);
      if (!hold) continue;
      if (log.some((r) => disturbs(r, worker, p.client, p.acl, hold.kind, event.t0 - TIMING.watchdogTimeout, event.t))) stats.disturbed += 1;
      else guarded.add(p.hold);
    }
    single.push({ worker, start: event.t0, end: event.t, starts: [event.t0], froze: false, stalled: true, guarded });
  }
  single.sort((a, b) => a.worker - b.worker || a.start - b.start);
  const merged: Pause[] = [];
  for (const pause of single) {
    const last = merged.at(-1);
    if (last && last.worker === pause.worker && pause.start <= last.end + WAKE_MARGIN_MS) {
      // Back to back: one pause, and no hold is guarded through it (a freeze stops the threads too).
      merged[merged.length - 1] = {
        worker: last.worker,
        start: last.start,
        end: Math.max(last.end, pause.end),
        starts: [...last.starts, pause.start],
        froze: last.froze || pause.froze,
        stalled: last.stalled || pause.stalled,
        guarded: new Set(),
      };
    } else merged.push(pause);
  }
  return merged;
}

/** The stalls as freezes of their workers, for the checks that allow for a frozen worker (semaphores, owner counts). */
export function stallsAsFreezes(stalls: readonly StallRecord[]): FaultRecord[] {
  return stalls.map(({ worker, event }) => ({
    fault: { type: 'sigstop', at: 0, duration: event.t - event.t0, worker },
    start: event.t0,
    end: event.t,
  }));
}

/** Counts what became of the guarded holds, and checks that every `stalled` followed a pause long enough. */
export function checkStalls(holds: ReadonlyMap<string, Hold>, pauses: readonly Pause[], stats: StallStats, violations: Violation[]): void {
  for (const pause of pauses) {
    for (const id of pause.guarded) {
      const hold = holds.get(id)!;
      stats.judged += 1;
      const lostAfter = hold.endKind === 'lost' && hold.end! >= pause.start && hold.end! <= pause.end + STALLED_TOLD_MS;
      if (!lostAfter) stats.kept += 1;
      else if (hold.lostReason === 'stalled') stats.lostStalled += 1;
      else stats.lostOther += 1;
    }
  }
  for (const hold of holds.values()) {
    if (hold.lostReason !== 'stalled' || hold.end === undefined) continue;
    const lost = hold.end;
    const long = pauses.some(
      (p) => p.worker === hold.worker && p.start <= lost && lost <= p.end + STALLED_TOLD_MS && p.end - p.start >= TIMING.maxStall - STALLED_SLACK_MS,
    );
    if (long) continue;
    const before = pauses.filter((p) => p.worker === hold.worker && p.start <= lost).at(-1);
    violations.push({
      kind: 'stalled-early',
      name: hold.names[0],
      at: lost,
      message:
        `hold ${hold.id} (${hold.owner}, ${hold.kind}) was told it lost the lock (stalled) although its worker's event loop had not been blocked ` +
        `for maxStall (${TIMING.maxStall} ms) less ${STALLED_SLACK_MS} ms just before` +
        (before ? ` (its last pause: ${(before.end - before.start).toFixed(0)} ms, ended ${(lost - before.end).toFixed(0)} ms before)` : ' (no pause before)'),
    });
  }
}
