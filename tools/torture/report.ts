/** The run's output: the summary lines, and on a violation what it takes to replay it. */
import type { TortureArgs } from './args.js';
import type { Checker, Violation } from './checker.js';
import type { FaultRecord, TaggedEvent } from './faults.js';
import type { ClientSetup } from './events.js';
import { describeFault, FAULT_TYPES, TIMING, type FaultType } from './schedule.js';

/** Violations printed in full (with their trace); the others are counted. */
const DETAILED = 5;
/** The trace shows this much before and after a violation, ms. */
const TRACE_WINDOW_MS = 2_000;
const TRACE_LINES = 80;

export function faultCounts(log: readonly FaultRecord[]): Record<FaultType, number> {
  const counts = Object.fromEntries(FAULT_TYPES.map((type) => [type, 0])) as Record<FaultType, number>;
  for (const record of log) if (!record.error) counts[record.fault.type] += 1;
  return counts;
}

export function replayCommand(args: TortureArgs): string {
  return `npm run torture -- --seed ${args.seed} --seconds ${args.seconds} --kinds ${args.kinds.join(',')} --processes ${args.processes} --clients ${args.clients} --client ${args.client}`;
}

function describeEvent(tagged: TaggedEvent, origin: number): string {
  const e = tagged.event;
  const at = (t: number): string => `+${((t - origin) / 1_000).toFixed(3)}s`;
  const who = `w${tagged.worker}#${tagged.incarnation}`;
  switch (e.type) {
    case 'acquired':
      return `${at(e.t)} ${who} acquired ${e.kind} ${e.names.join('+')} ${e.mode} hold=${e.hold} owner=${e.owner} ${e.watchdog ? 'watchdog' : `lease=${e.ttl}`}${e.reentry ? ' re-entry' : ''}${e.adoptedFrom === undefined ? '' : ` adopted from ${e.adoptedFrom}`}${e.token === undefined ? '' : ` token=${e.token}`} (called ${at(e.t0)})`;
    case 'attempt':
      return `${at(e.t)} ${who} re-entry called ${e.names.join('+')} owner=${e.owner} lease=${e.ttl}`;
    case 'release':
      return `${at(e.t)} ${who} release called hold=${e.hold}`;
    case 'released':
      return `${at(e.t)} ${who} release hold=${e.hold} ${e.ok ? 'ok' : `FAILED ${e.error}`} (called ${at(e.t0)})${e.aborted ? ' (Lease aborted)' : ''}`;
    case 'retried':
      return `${at(e.t)} ${who} release again (try ${e.n}) hold=${e.hold} ${e.ok ? 'ok' : `FAILED ${e.error}`} (called ${at(e.t0)})${e.aborted ? ' (Lease aborted)' : ''}`;
    case 'owner-count':
      return `${at(e.t)} ${who} ${e.final ? 'every Lease released' : `${e.live} Lease(s) live`} owner=${e.owner} op=${e.op}`;
    case 'query':
      return `${at(e.t)} ${who} after the hand-off of hold=${e.hold}${e.adopted ? ' and its adoption' : ''}: isHeldByCurrentOwner ${e.held}, getHoldCount ${e.count}`;
    case 'lost':
      return `${at(e.t)} ${who} LOST hold=${e.hold} (${e.reason})`;
    case 'handoff':
      return `${at(e.t)} ${who} hand-off called hold=${e.hold} owner=${e.owner}`;
    case 'adopt-failed':
      return `${at(e.t)} ${who} hand-off of owner=${e.owner} not adopted: ${e.error}`;
    case 'write':
      return `${at(e.t)} ${who} write ${e.name} token=${e.token} hold=${e.hold}`;
    case 'wait':
      return `${at(e.t)} ${who} wait ${e.kind} ${e.names.join('+')} op=${e.op} budget=${e.budget} took ${(e.t - e.t0).toFixed(0)} ms: ${e.outcome}${e.error ? ` ${e.error}` : ''}`;
    case 'observed':
      return `${at(e.t)} ${who} observer ${e.observer} saw ${e.epoch === null ? 'no leader' : `epoch ${e.epoch} value ${e.value}`}`;
    case 'stall':
      return e.phase === 'begin'
        ? `${at(e.t0)} ${who} STALL begins (client ${e.client}) holding hold=${e.hold}; renewed by a thread: ${e.protected.map((p) => p.hold).join(',') || 'none'}`
        : `${at(e.t)} ${who} stall of client ${e.client} ends after ${(e.t - e.t0).toFixed(0)} ms`;
    case 'thread':
      return `${at(e.t)} ${who} renewal thread of client ${e.client} ${e.which} ${e.up ? 'connected' : `DOWN: ${e.error}`}`;
    case 'ready':
      return `${at(e.t)} ${who} ready`;
    case 'done':
      return `${at(e.t)} ${who} done`;
    case 'stuck':
      return `${at(e.t)} ${who} STUCK stopping: ${e.doing}`;
  }
}

function eventTime(tagged: TaggedEvent): number {
  return tagged.event.t;
}

function eventNames(tagged: TaggedEvent): readonly string[] {
  const e = tagged.event;
  if (e.type === 'acquired' || e.type === 'wait' || e.type === 'attempt' || e.type === 'owner-count') return e.names;
  if (e.type === 'write' || e.type === 'observed') return [e.name];
  return [];
}

function trace(violation: Violation, checker: Checker, log: readonly FaultRecord[], origin: number): string[] {
  if (violation.at === undefined) return [];
  const from = violation.at - TRACE_WINDOW_MS;
  const to = (violation.until ?? violation.at) + TRACE_WINDOW_MS;
  // Holds on the lock, so that releases and losses (which name only the hold) are shown too.
  const holds = new Set(
    [...checker.holds.values()].filter((h) => violation.name === undefined || h.names.includes(violation.name)).map((h) => h.id),
  );
  const lines = checker.events
    .filter((tagged) => {
      const t = eventTime(tagged);
      if (t < from || t > to) return false;
      const e = tagged.event;
      // The owner counts are for the parent: the releases around them tell the story.
      if (e.type === 'owner-count') return false;
      if (violation.name === undefined) return true;
      if ('hold' in e && holds.has(e.hold)) return true;
      if (e.type === 'stall' && e.protected.some((p) => holds.has(p.hold))) return true;
      return eventNames(tagged).includes(violation.name);
    })
    .sort((a, b) => eventTime(a) - eventTime(b))
    .map((tagged) => `    ${describeEvent(tagged, origin)}`);
  const faults = log
    .filter((r) => r.start <= to && (r.end ?? r.start) >= from)
    .map((r) => `    fault ${describeFault(r.fault)} (ran +${((r.start - origin) / 1_000).toFixed(3)}s → +${(((r.end ?? r.start) - origin) / 1_000).toFixed(3)}s)`);
  const shown = lines.length > TRACE_LINES ? [...lines.slice(0, TRACE_LINES), `    … ${lines.length - TRACE_LINES} more`] : lines;
  return ['  faults around it:', ...(faults.length ? faults : ['    none']), '  events on the lock around it:', ...shown];
}

/** Prints the report; returns the process exit code. */
export function report(
  args: TortureArgs,
  checker: Checker,
  log: readonly FaultRecord[],
  origin: number,
  extra: readonly Violation[],
  eventsFile?: string,
  setups: readonly (readonly ClientSetup[])[] = [],
): number {
  const violations = [...checker.violations, ...extra];
  const counts = faultCounts(log);
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
  const s = checker.stats;
  console.log(
    `torture seed=${args.seed} seconds=${args.seconds} kinds=${args.kinds.join(',')} processes=${args.processes} client=${args.client} ` +
      `holds=${s.holds} faults=${total} violations=${violations.length}`,
  );
  console.log(`faults: ${FAULT_TYPES.map((type) => `${type}=${counts[type]}`).join(' ')}`);
  const lead = s.minLostLead === Infinity ? 'n/a' : `${s.minLostLead.toFixed(1)}ms`;
  console.log(
    `checks: re-entries=${s.reentries} lost=${s.lost} (max-hold-time ${s.maxHoldTime}) hand-offs=${s.handOffs} (adopted ${s.adopted}) waits=${s.waits} (timed out ${s.waitsTimedOut}, aborted ${s.waitsAborted}, ` +
      `failed ${s.waitsFailed}; worst ${s.longestWaitOverBudget.toFixed(0)}ms over budget: ${s.longestWait}) releases-failed=${s.releasesFailed} ` +
      `fenced-writes=${s.writes} (fenced off ${s.fencedOff}) stuck-probes=${s.probes} cut-by-freeze=${s.cutByFreeze} ` +
      `cut-by-restart=${s.cutByRestart} unanswered-releases=${s.unansweredReleases} ` +
      `(taken by another owner before the worker died: ${s.acquiredDuringUnanswered}) min-lost-lead=${lead}`,
  );
  const r = checker.releaseStats;
  const which = (pick: (setup: ClientSetup) => boolean): string =>
    setups.flatMap((clients, w) => clients.flatMap((setup, c) => (pick(setup) ? [`w${w}c${c}`] : []))).join(',') || 'none';
  console.log(
    `releases: called-again=${r.releaseRetries} (resolved ${r.releaseRetriesOk}) answers-judged=${r.answersJudged} ` +
      `owner-counts=${r.liveCounts} (every Lease released: ${r.finalCounts}) hand-off-queries=${r.handOffQueries}; ` +
      `clients with rlock's own retries: ${which((s) => s.ownRetries)}; as the ACL user: ${which((s) => s.acl)}`,
  );
  const sem = checker.semaphores;
  if (sem && sem.holds > 0) {
    console.log(
      `semaphores: holds=${sem.holds} most-permits-out=${sem.maxOut} waits-timed-out=${sem.timedOut} (judged for a missed wake-up: ${sem.judged})`,
    );
  }
  const st = checker.stallStats;
  const threaded = which((s) => s.thread);
  console.log(
    `stalls: done=${st.stalls} (past maxStall ${st.pastMaxStall}, ended by a kill ${st.killed}; maxStall ${TIMING.maxStall} ms, longest ${st.longestMs.toFixed(0)} ms) ` +
      `holds renewed by a thread through one=${st.guarded} (judged in full ${st.judged}: kept ${st.kept}, told stalled ${st.lostStalled}, lost otherwise ${st.lostOther}; ` +
      `a fault in their way ${st.disturbed}) cut-by-stall=${s.cutByStall}; renewal threads on ${threaded}: connected ${st.threadsUp}, down ${st.threadsDown}`,
  );
  for (const error of st.downErrors) console.log(`renewal thread down: ${error}`);
  const o = checker.observerStats;
  if (o && o.observed > 0) console.log(`election observers: ${o.observers} saw ${o.observed} changes (${o.compared} consecutive pairs compared)`);
  const at = (t: number): string => `+${((t - origin) / 1_000).toFixed(3)}s`;
  for (const { hold, other, diedAt } of checker.takenWhileUnanswered) {
    console.log(
      `unanswered release: hold ${hold.id} (${hold.kind} ${hold.names.join('+')}) called release at ${at(hold.end!)}, ` +
        `its worker died at ${at(diedAt)} before the answer; hold ${other.id} (${other.owner}) took the lock at ${at(other.start)}`,
    );
  }
  if (violations.length === 0) return 0;
  const byKind = new Map<string, number>();
  for (const v of violations) byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + 1);
  console.log(`VIOLATIONS: ${[...byKind].map(([kind, n]) => `${kind}=${n}`).join(' ')}`);
  console.log(`replay: ${replayCommand(args)}`);
  violations.sort((a, b) => (a.at ?? Infinity) - (b.at ?? Infinity));
  // The first violations of each kind in full, up to DETAILED.
  const detailed = new Set<Violation>();
  for (let round = 0; detailed.size < Math.min(DETAILED, violations.length); round += 1) {
    const seen = new Map<string, number>();
    for (const v of violations) {
      const n = seen.get(v.kind) ?? 0;
      seen.set(v.kind, n + 1);
      if (n === round && detailed.size < DETAILED) detailed.add(v);
    }
  }
  [...detailed]
    .sort((a, b) => (a.at ?? Infinity) - (b.at ?? Infinity))
    .forEach((v, i) => {
      const at = v.at === undefined ? '' : ` at +${((v.at - origin) / 1_000).toFixed(3)}s`;
      console.log(`violation ${i + 1}/${violations.length} [${v.kind}]${at}: ${v.message}`);
      for (const line of trace(v, checker, log, origin)) console.log(line);
    });
  for (const v of violations) if (!detailed.has(v)) console.log(`  also [${v.kind}]: ${v.message}`);
  if (eventsFile) console.log(`every event of the run: ${eventsFile}`);
  console.log('schedule:');
  for (const record of log) {
    console.log(`  ${describeFault(record.fault)}${record.error ? ` (not applied: ${record.error})` : ''}`);
  }
  return 1;
}
