/**
 * The observers of the torture's `election` kind: every observer's sequence of leaders must be in
 * order — epochs never go back, a leader's values come in the order it proclaimed them, nothing
 * is told twice — and each leader it names has the epoch its campaign got (or an earlier one,
 * for an attempt let go because its answer came too late). A restart of the server without
 * persistence begins the epochs again: a leader is not compared with one whose campaign was
 * called before a restart (an observer frozen through a restart reports, when it wakes, what
 * it heard before it).
 */
import type { Hold, Violation } from './checker.js';
import type { FaultRecord } from './faults.js';

/** One change an observer reported. */
export interface Observation {
  readonly t: number;
  readonly observer: string;
  readonly name: string;
  readonly epoch: number | null;
  readonly value: string | null;
}

/**
 * How stale an observation may be when it is reported: a worker frozen (SIGSTOP, at most 5 s)
 * reports on waking what its connection had delivered before, ms.
 */
const STALE_MS = 10_000;

export interface ObserverStats {
  observers: number;
  observed: number;
  /** Leaders compared with the leader seen before them (not across a restart). */
  compared: number;
}

function parseValue(value: string): { hold: string; n: number } | undefined {
  const at = value.lastIndexOf('#');
  if (at <= 0) return undefined;
  const n = Number(value.slice(at + 1));
  return Number.isInteger(n) ? { hold: value.slice(0, at), n } : undefined;
}

export function checkObservers(
  observations: readonly Observation[],
  holds: ReadonlyMap<string, Hold>,
  log: readonly FaultRecord[],
  violations: Violation[],
): ObserverStats {
  const restarts = log.filter((r) => r.fault.type === 'redis-restart' && r.fault.server === 'main' && r.end !== undefined);
  // A restart without persistence (its keys are lost somewhere between its start and end) that
  // overlaps (from, to]: epochs may have begun again in between.
  const restartIn = (from: number, to: number): boolean => restarts.some((r) => r.end! > from && r.start <= to);
  const byObserver = new Map<string, Observation[]>();
  for (const o of observations) {
    const list = byObserver.get(o.observer) ?? [];
    list.push(o);
    byObserver.set(o.observer, list);
  }
  const stats: ObserverStats = { observers: byObserver.size, observed: observations.length, compared: 0 };
  const violation = (o: Observation, message: string): void =>
    void violations.push({ kind: 'observer-order', name: o.name, at: o.t, message: `observer ${o.observer}: ${message}` });

  for (const list of byObserver.values()) {
    // The last leader seen before the current observation (through vacancies).
    let lastLeader: { readonly o: Observation; readonly origin: number } | undefined;
    let previous: Observation | undefined;
    for (const o of list) {
      const parsed = o.value === null ? undefined : parseValue(o.value);
      const hold = parsed && holds.get(parsed.hold);
      if (o.epoch !== null && parsed && hold?.token !== undefined) {
        // A campaign whose answer came after its lease ran out lets go and asks again: its value
        // may lead under an earlier epoch first (announced, then let go). Proclaims come only
        // from the epoch the campaign resolved with.
        if (parsed.n === 0 ? o.epoch > hold.token : o.epoch !== hold.token) {
          violation(o, `leader ${parsed.hold} seen with epoch ${o.epoch}, but its campaign got ${hold.token}`);
        }
      }
      if (previous && o.epoch === null && previous.epoch === null && !restartIn(previous.t - STALE_MS, o.t)) {
        violation(o, 'told "no leader" twice in a row');
      }
      // Compared with the last leader unless a restart may have begun the epochs again since
      // that leader's campaign was called.
      if (o.epoch !== null && lastLeader && previous && !restartIn(lastLeader.origin, o.t)) {
        stats.compared += 1;
        const last = lastLeader.o;
        const lastParsed = parseValue(last.value!);
        if (o.epoch < last.epoch!) violation(o, `epoch ${o.epoch} (${o.value}) seen after epoch ${last.epoch} (${last.value})`);
        else if (o.epoch === last.epoch) {
          if (previous.epoch === null) violation(o, `leader of epoch ${o.epoch} seen again after it was gone`);
          else if (!parsed || !lastParsed || parsed.hold !== lastParsed.hold || parsed.n <= lastParsed.n) {
            violation(o, `epoch ${o.epoch}: ${o.value} seen after ${last.value} (values out of order or repeated)`);
          }
        }
      }
      if (o.epoch !== null) lastLeader = { o, origin: hold ? hold.t0 : o.t - STALE_MS };
      previous = o;
    }
  }
  return stats;
}
