/**
 * The torture checks of releases and queries (see docs/torture.md):
 * - `not-held`: a release (first call or called again) of a Lease its holder was never told it
 *   lost answered LockNotHeldError while the hold's lease still stood in Redis: the release, or
 *   another Lease's, was applied twice, or a retry was not told that its first try was applied.
 * - `owner-count`: Redis counted fewer holds of an owner than the Leases it had live, or still
 *   held the owner after every Lease of its operation was released (each release resolved).
 * - `hand-off-query`: after a hand-off, the handing-off context was told it holds the lock.
 */
import type { Kind } from './args.js';
import type { FaultRecord, TaggedEvent } from './faults.js';
import type { Hold, Violation } from './checker.js';
import { HOLD_DRIFT_FACTOR, HOLD_DRIFT_MS } from '../../lib/options.js';

/** The kinds whose release answers are judged: one server, one hold record per owner. */
const JUDGED: readonly Kind[] = ['lock', 'fair', 'fenced', 'rw'];
/** A Lease's lease is taken to stand until this long before its end by the holder's clock, ms. */
const LEASE_MARGIN_MS = 100;
/** A `lost` (expired, max-hold-time, stalled: a renewal thread let it go) this close to an owner count explains a low count, ms. */
const LOSS_NEAR_MS = 1_000;

/** One answer to a Lease's release(): the first call (n 1) or a retry. */
export interface ReleaseAnswer {
  readonly n: number;
  readonly t0: number;
  readonly t: number;
  readonly ok: boolean;
  readonly error: string | undefined;
  readonly aborted: boolean;
}

export type OwnerCountEvent = Extract<TaggedEvent['event'], { type: 'owner-count' }>;
export type QueryEvent = Extract<TaggedEvent['event'], { type: 'query' }>;

/** An owner count from a worker and what Redis said when the parent asked at once. */
export interface CountCheck {
  readonly worker: number;
  readonly event: OwnerCountEvent;
  /** When Redis answered; undefined: it could not be asked. */
  answeredAt?: number;
  /** Live checks: the owner's hold count in Redis (0 when absent). */
  count?: number;
  /** Final checks: what Redis still has for the owner, or false. */
  held?: string | false;
  /** A final check left for rlock's background retries: since when nothing hindered them. */
  quietSince?: number;
}

export interface ReleaseStats {
  releaseRetries: number;
  releaseRetriesOk: number;
  /** Release answers judged against the lease (not-held), owner counts compared, final checks made, queries after hand-offs. */
  answersJudged: number;
  liveCounts: number;
  finalCounts: number;
  handOffQueries: number;
}

export function newReleaseStats(): ReleaseStats {
  return { releaseRetries: 0, releaseRetriesOk: 0, answersJudged: 0, liveCounts: 0, finalCounts: 0, handOffQueries: 0 };
}

/** Restarts of the main server without persistence, as [start, end]. */
function restartsOfMain(log: readonly FaultRecord[]): { start: number; end: number }[] {
  return log
    .filter((r) => r.fault.type === 'redis-restart' && r.fault.server === 'main' && !r.error && r.end !== undefined)
    .map((r) => ({ start: r.start, end: r.end! }));
}

/** Freezes of `worker`, as [start, end]. */
function freezesOf(worker: number, log: readonly FaultRecord[]): { start: number; end: number }[] {
  return log
    .filter((r) => r.fault.type === 'sigstop' && r.fault.worker === worker && !r.error)
    .map((r) => ({ start: r.start, end: r.end ?? Infinity }));
}

export function checkReleases(
  holds: ReadonlyMap<string, Hold>,
  answers: ReadonlyMap<string, readonly ReleaseAnswer[]>,
  counts: readonly CountCheck[],
  queries: readonly { worker: number; event: QueryEvent }[],
  log: readonly FaultRecord[],
  violations: Violation[],
  stats: ReleaseStats,
): void {
  const restarts = restartsOfMain(log);
  const byOwner = new Map<string, Hold[]>();
  for (const hold of holds.values()) {
    const list = byOwner.get(hold.owner) ?? [];
    list.push(hold);
    byOwner.set(hold.owner, list);
  }
  checkNotHeld(holds, answers, byOwner, restarts, violations, stats);
  checkCounts(counts, byOwner, restarts, log, violations, stats);
  const told = new Set<string>();
  for (const { event } of queries) {
    stats.handOffQueries += 1;
    // One report per hand-off: its first wrong answer.
    if ((!event.held && event.count === 0) || told.has(event.hold)) continue;
    told.add(event.hold);
    violations.push({
      kind: 'hand-off-query',
      name: holds.get(event.hold)?.names[0],
      at: event.t,
      message:
        `after hold ${event.hold} (${event.owner}) was handed off${event.adopted ? ' and adopted' : ''}, the handing-off context ` +
        `was told isHeldByCurrentOwner() ${event.held}, getHoldCount() ${event.count} (a lock it does not hold: false, 0)`,
    });
  }
}

/**
 * Until when Redis keeps `hold` in any case: each acquisition of the owner on its side, called at
 * t0 with lease ttl, set the key to live at least until t0 + ttl (a re-entry never shortens it),
 * if it ran while `hold` was held or led up to it unbroken (it was still held when `hold` was
 * acquired: a hold released before may have been the last, and the key gone with it).
 */
function leaseStands(hold: Hold, owned: readonly Hold[], calledAt: number): number {
  let end = -Infinity;
  for (const other of owned) {
    // Acquired before the release was called, on the same side, and not lost (let go of) by then.
    if (other.mode !== hold.mode || other.start > calledAt || other.adoptedFrom !== undefined) continue;
    if (other.endKind === 'lost' && other.end! <= calledAt) continue;
    if (other !== hold && other.t0 < hold.start && (other.end ?? Infinity) < hold.start) continue;
    end = Math.max(end, other.t0 + other.ttl - (other.ttl * HOLD_DRIFT_FACTOR + HOLD_DRIFT_MS) - LEASE_MARGIN_MS);
  }
  return end;
}

function checkNotHeld(
  holds: ReadonlyMap<string, Hold>,
  answers: ReadonlyMap<string, readonly ReleaseAnswer[]>,
  byOwner: ReadonlyMap<string, readonly Hold[]>,
  restarts: readonly { start: number; end: number }[],
  violations: Violation[],
  stats: ReleaseStats,
): void {
  for (const [id, list] of answers) {
    const hold = holds.get(id);
    // An adopted hold keeps the handed-off hold's lease end; a capped one may be let go at its cap.
    if (!hold || !JUDGED.includes(hold.kind) || hold.adoptedFrom !== undefined || hold.capped) continue;
    const owned = byOwner.get(hold.owner) ?? [];
    for (const answer of list) {
      // Told it lost the lock first: a release may find nothing.
      if (answer.aborted) break;
      const stands = leaseStands(hold, owned, answer.t0);
      if (answer.t >= stands) continue;
      // A restart without persistence since the owner's first hold took everything.
      const first = Math.min(...owned.map((h) => h.t0));
      if (restarts.some((r) => r.start < answer.t && r.end > first)) continue;
      stats.answersJudged += 1;
      if (answer.ok || !answer.error?.startsWith('LockNotHeldError')) continue;
      violations.push({
        kind: 'not-held',
        name: hold.names[0],
        at: answer.t0,
        until: answer.t,
        message:
          `${answer.n === 1 ? 'the release' : `release() again (try ${answer.n})`} of hold ${hold.id} (${hold.owner}, ${hold.kind} ${hold.mode}) ` +
          `answered ${answer.error} ${(stands - answer.t).toFixed(0)} ms before its lease could have ended, its Lease never told it lost the lock` +
          (list.length > 1 ? ` (its answers: ${list.map((a) => (a.ok ? 'ok' : (a.error ?? '').split(':')[0])).join(', ')})` : ''),
      });
    }
  }
}

function checkCounts(
  counts: readonly CountCheck[],
  byOwner: ReadonlyMap<string, readonly Hold[]>,
  restarts: readonly { start: number; end: number }[],
  log: readonly FaultRecord[],
  violations: Violation[],
  stats: ReleaseStats,
): void {
  const reported = new Set<string>();
  for (const check of counts) {
    const { event, answeredAt } = check;
    if (answeredAt === undefined) continue;
    const name = event.names.join('+');
    if (event.final) {
      if (check.held === undefined) continue;
      stats.finalCounts += 1;
      if (check.held === false) continue;
      violations.push({
        kind: 'owner-count',
        name: event.names[0],
        at: event.t,
        message:
          check.quietSince === undefined
            ? `lock "${name}" (${event.kind}) still held by ${event.owner} when every Lease of its operation ${event.op} was released (each release resolved): ${check.held}`
            : `lock "${name}" (${event.kind}) still held by ${event.owner} ${Math.round(answeredAt - event.t)} ms after every Lease of its operation ${event.op} was released ` +
              `(${event.unanswered} release(s) rejected, left to rlock's background retries; no fault in their way for ${Math.round(answeredAt - check.quietSince)} ms), within its lease: ${check.held}`,
      });
      continue;
    }
    if (check.count === undefined) continue;
    const owned = byOwner.get(event.owner) ?? [];
    // A release called after the count and before Redis answered may have run first: the count no longer stands.
    if (owned.some((h) => h.endKind === 'release' && h.end! > event.t && h.end! <= answeredAt)) continue;
    const first = Math.min(...owned.map((h) => h.t0));
    // Redis lost the key (a restart without persistence), or the worker froze past a lease before Redis was asked.
    if (restarts.some((r) => r.start < answeredAt && r.end > first)) continue;
    if (freezesOf(check.worker, log).some((f) => f.start < answeredAt && f.end > event.t)) continue;
    // The lease ran out (or reached its cap, or the renewal thread let it go) as Redis was asked: the holder is told right after.
    const lostNear = owned.some(
      (h) =>
        (h.lostReason === 'expired' || h.lostReason === 'max-hold-time' || h.lostReason === 'stalled') &&
        h.end !== undefined &&
        h.end >= event.t - 5 &&
        h.end <= answeredAt + LOSS_NEAR_MS,
    );
    if (lostNear) continue;
    stats.liveCounts += 1;
    if (check.count >= event.live) continue;
    // One report per operation: its first low count.
    if (reported.has(event.op)) continue;
    reported.add(event.op);
    violations.push({
      kind: 'owner-count',
      name: event.names[0],
      at: event.t,
      until: answeredAt,
      message: `lock "${name}" (${event.kind}): Redis counts ${check.count} hold(s) of ${event.owner} while ${event.live} of its Leases are live (op ${event.op})`,
    });
  }
}
