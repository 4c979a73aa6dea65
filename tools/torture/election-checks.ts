/**
 * The observers of the torture's `election` kind: every observer's sequence of leaders must be in
 * order — epochs never go back, a leader's values come in the order it proclaimed them, nothing
 * is told twice — and each leader it names has the epoch its campaign got (or an earlier one,
 * for an attempt let go because its answer came too late). A restart of the
 * server without persistence begins the epochs again: pairs of observations around one are not
 * compared.
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

/** Observations this close after a restart of the main server may still come from before it, ms. */
const RESTART_MARGIN_MS = 3_000;

export interface ObserverStats {
  observers: number;
  observed: number;
  /** Pairs of consecutive observations compared (not around a restart). */
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
  const nearRestart = (t: number): boolean => restarts.some((r) => t >= r.start && t <= r.end! + RESTART_MARGIN_MS);
  const restartsBefore = (t: number): number => restarts.filter((r) => r.start <= t).length;
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
    let lastLeader: Observation | undefined;
    let previous: Observation | undefined;
    for (const o of list) {
      const parsed = o.value === null ? undefined : parseValue(o.value);
      if (o.epoch !== null && parsed) {
        const hold = holds.get(parsed.hold);
        // A campaign whose answer came after its lease ran out lets go and asks again: its value
        // may lead under an earlier epoch first (announced, then let go). Proclaims come only
        // from the epoch the campaign resolved with.
        const wrong = hold?.token !== undefined && (parsed.n === 0 ? o.epoch > hold.token : o.epoch !== hold.token);
        if (wrong) violation(o, `leader ${parsed.hold} seen with epoch ${o.epoch}, but its campaign got ${hold.token}`);
      }
      const comparable =
        previous !== undefined && !nearRestart(o.t) && !nearRestart(previous.t) && restartsBefore(o.t) === restartsBefore(previous.t);
      if (comparable) {
        stats.compared += 1;
        if (o.epoch === null && previous!.epoch === null) violation(o, 'told "no leader" twice in a row');
        if (o.epoch !== null && lastLeader && lastLeader.epoch !== null && restartsBefore(lastLeader.t) === restartsBefore(o.t) && !nearRestart(lastLeader.t)) {
          const last = parseValue(lastLeader.value!);
          if (o.epoch < lastLeader.epoch) violation(o, `epoch ${o.epoch} (${o.value}) seen after epoch ${lastLeader.epoch} (${lastLeader.value})`);
          else if (o.epoch === lastLeader.epoch) {
            if (previous!.epoch === null) violation(o, `leader of epoch ${o.epoch} seen again after it was gone`);
            else if (!parsed || !last || parsed.hold !== last.hold || parsed.n <= last.n) {
              violation(o, `epoch ${o.epoch}: ${o.value} seen after ${lastLeader.value} (values out of order or repeated)`);
            }
          }
        }
      }
      if (o.epoch !== null) lastLeader = o;
      previous = o;
    }
  }
  return stats;
}
