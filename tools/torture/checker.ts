/**
 * The checker: builds every hold's interval as its holder believed it from the workers' events
 * and the fault log, then checks exclusion, "told first", wait bounds, fencing tokens, stuck
 * locks (live probes) and the keys left at the end. See docs/torture.md for what each check
 * means and which faults legitimately end a hold early.
 */
import type { Kind } from './args.js';
import type { FaultRecord, TaggedEvent } from './faults.js';
import type { HoldMode } from './events.js';
import { TIMING, type ServerId } from './schedule.js';
import { HOLD_DRIFT_FACTOR, HOLD_DRIFT_MS, SINGLE_ATTEMPT_MS } from '../../lib/options.js';
import { checkSemaphores, type SemaphoreStats } from './semaphore-check.js';
import { checkObservers, type Observation, type ObserverStats } from './election-checks.js';
import { checkReleases, newReleaseStats, type CountCheck, type QueryEvent, type ReleaseAnswer, type ReleaseStats } from './release-checks.js';
import { checkStalls, countStallEvent, newStallStats, pausesOf, stallsAsFreezes, type Pause, type StallRecord, type StallStats } from './stall-checks.js';

/** A frozen (SIGSTOPped) worker's hold that ends this soon after it wakes ended when it froze, ms. */
export const WAKE_MARGIN_MS = 500;
/** A wait may end this much after its budget (event-loop lag on a shared machine), ms. */
export const WAIT_MARGIN_MS = 250;
/**
 * rlock's background retries of a release pause at most 1 s: after this long with no fault on the
 * client's way to Redis, one got through, ms.
 */
export const QUIET_MS = 2_000;
/** A deferred owner check is made this long before the owner's lease could end, at the latest, ms. */
const QUIET_LEASE_MARGIN_MS = 300;
/** A lock whose holder is gone must be free within its lease plus this, ms. */
export const STUCK_MARGIN_MS = 1_000;
/** How long a stuck lock is watched, to tell how it ends, ms. */
const STUCK_FOLLOW_MS = 10_000;

const clock = (): number => performance.timeOrigin + performance.now();
/** How much earlier than Redis the holder's clock ends a hold (lib/holding/hold.ts holdDrift). */
const holdDrift = (ttl: number): number => ttl * HOLD_DRIFT_FACTOR + HOLD_DRIFT_MS;
/** A hold told `lost` this soon after its acquisition resolved was lost before it began, ms. */
export const LATE_GRANT_MS = 50;

export interface Hold {
  readonly id: string;
  readonly worker: number;
  readonly incarnation: number;
  readonly kind: Kind;
  readonly names: readonly string[];
  readonly mode: HoldMode;
  readonly owner: string;
  /** When the acquiring call was made, and when it resolved (the hold begins). */
  readonly t0: number;
  readonly start: number;
  readonly ttl: number;
  readonly watchdog: boolean;
  readonly reentry: boolean;
  /** An adopted hold: the handed-off hold it continues (same owner and token). */
  readonly adoptedFrom?: string;
  readonly token: number | undefined;
  /** Semaphores: how many permits it has. */
  readonly permits?: number;
  /** Taken with a maxHoldTime. */
  readonly capped?: boolean;
  /** The holder stopped believing it holds: it called release, was told `lost`, handed it off, or died. */
  end: number | undefined;
  endKind: 'release' | 'lost' | 'handed-off' | 'killed' | 'exit' | undefined;
  lostReason?: string;
  releaseOk?: boolean;
  releaseError?: string;
  /** Its release was called but the worker died before the answer came: when it died. */
  unansweredUntil?: number;
  /** Where the checks end it (freezes and restarts without persistence end holds early; see effectiveEnd). */
  effEnd?: number;
  cutBy?: string;
  /** Counted as let go of in Redis (the stuck probe's clock runs). */
  probed?: boolean;
}

export type ViolationKind =
  | 'exclusion'
  | 'told-late'
  | 'wait-overrun'
  | 'stuck'
  | 'token-order'
  | 'token-reentry'
  | 'fenced-off'
  | 'leftover-key'
  | 'missed-wake'
  | 'observer-order'
  | 'not-held'
  | 'owner-count'
  | 'hand-off-query'
  | 'stalled-early'
  | 'worker';

export interface Violation {
  readonly kind: ViolationKind;
  readonly message: string;
  /** The lock it concerns, and the moment, for the trace around it. */
  readonly name?: string;
  readonly at?: number;
  readonly until?: number;
}

export interface CheckStats {
  holds: number;
  reentries: number;
  lost: number;
  /** Hand-offs asked for, adoptions that followed, and losses to maxHoldTime. */
  handOffs: number;
  adopted: number;
  maxHoldTime: number;
  waits: number;
  waitsTimedOut: number;
  waitsAborted: number;
  waitsFailed: number;
  releasesFailed: number;
  writes: number;
  fencedOff: number;
  probes: number;
  cutByFreeze: number;
  /** Holds cut by a stall of their worker's event loop (stall-checks.ts), and by a restart. */
  cutByStall: number;
  cutByRestart: number;
  /** Releases called whose worker died before the answer; of those, how many saw another owner acquire meanwhile. */
  unansweredReleases: number;
  acquiredDuringUnanswered: number;
  /** Smallest margin by which a `lost` came before another owner's acquisition, ms. */
  minLostLead: number;
  longestWaitOverBudget: number;
  longestWait: string;
}

/** Asks a server whether `owner` still holds lock `name`; undefined when it could not be asked. */
/**
 * Does `owner` still hold `name`? false if not; if so, what Redis has there (for the report);
 * undefined when a server could not be asked.
 */
export type HeldProbe = (kind: Kind, name: string, owner: string) => Promise<string | false | undefined>;

/** How many holds `owner` has of lock `name` in Redis (0 when none); undefined when it could not be asked. */
export type CountProbe = (kind: Kind, name: string, owner: string) => Promise<number | undefined>;

/** Which servers a kind's locks live on. */
export function serversOf(kind: Kind): readonly ServerId[] {
  return kind === 'redlock' ? [0, 1, 2, 3, 4] : ['main'];
}

export class Checker {
  readonly holds = new Map<string, Hold>();
  readonly events: TaggedEvent[] = [];
  readonly violations: Violation[] = [];
  /** Unanswered releases another owner took the lock after (the old checker's false overlaps), for the report. */
  readonly takenWhileUnanswered: { hold: Hold; other: Hold; diedAt: number }[] = [];
  readonly stats: CheckStats = {
    holds: 0,
    reentries: 0,
    lost: 0,
    handOffs: 0,
    adopted: 0,
    maxHoldTime: 0,
    waits: 0,
    waitsTimedOut: 0,
    waitsAborted: 0,
    waitsFailed: 0,
    releasesFailed: 0,
    writes: 0,
    fencedOff: 0,
    probes: 0,
    cutByFreeze: 0,
    cutByStall: 0,
    cutByRestart: 0,
    unansweredReleases: 0,
    acquiredDuringUnanswered: 0,
    minLostLead: Infinity,
    longestWaitOverBudget: -Infinity,
    longestWait: 'none',
  };
  /**
   * The fenced resource: per lock and token epoch, the highest token a write carried. A restart
   * without persistence loses the token counter: the holds acquired after it are a new epoch.
   */
  readonly resource = new Map<string, number>();
  /** The semaphore checks' figures (semaphore-check.ts), once finished. */
  semaphores: SemaphoreStats | undefined;
  /** Writes the resource refused (a token lower than one it had seen). */
  readonly #refused: { hold: string; t: number; token: number; name: string }[] = [];
  readonly #probe: HeldProbe;
  readonly #count: CountProbe | undefined;
  readonly #log: readonly FaultRecord[];
  /** Every answer to each hold's release() (the first call and its retries), the owner counts, the queries after hand-offs. */
  readonly #answers = new Map<string, ReleaseAnswer[]>();
  readonly #counts: CountCheck[] = [];
  readonly #queries: { worker: number; event: QueryEvent }[] = [];
  /** Worker incarnations gone (killed or exited), and when; when the run began stopping its workers. */
  readonly #gone = new Map<string, number>();
  #stoppingAt = Infinity;
  /** What the release checks counted (release-checks.ts). */
  readonly releaseStats: ReleaseStats = newReleaseStats();
  /** The workers' stalls and renewal threads (stall-checks.ts). */
  readonly stallStats: StallStats = newStallStats();
  readonly #stalls: StallRecord[] = [];
  /** Every worker's pauses (freezes and stalls), known once finish() ran. */
  #pauses: readonly Pause[] = [];
  /** Stalls begun and not ended, per worker incarnation (a kill ends one). */
  readonly #openStalls = new Map<string, StallRecord>();
  /** Open holds per owner (re-entries share an owner); the lock is probed when the last one ends. */
  readonly #owners = new Map<string, { open: number; ttl: number; kind: Kind; names: Set<string> }>();
  /**
   * Hand-offs on their way, per owner: the handle keeps the owner's hold alive (counted as an open
   * hold) until it is adopted, its adoption failed, or the worker that carries it died.
   */
  readonly #handOffs = new Map<string, { worker: number; incarnation: number }>();
  /** Each owner's latest re-entry call: when it was made, and the lease it asked for. */
  readonly #attempts = new Map<string, { t: number; ttl: number; waitMs: number }>();
  readonly #probes = new Set<Promise<void>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** The stuck probe's timer of each owner whose last hold ended. */
  readonly #stuckTimers = new Map<string, NodeJS.Timeout>();
  readonly #waits: Extract<TaggedEvent['event'], { type: 'wait' }>[] = [];
  readonly #waitWorker = new Map<object, number>();
  /** What the election observers saw (election-checks.ts), and what their check counted. */
  readonly observations: Observation[] = [];
  observerStats: ObserverStats | undefined;

  /** `log`: the fault log, read live (token epochs); `count`: for the owner counts (none: not checked). */
  constructor(probe: HeldProbe, log: readonly FaultRecord[], count?: CountProbe) {
    this.#probe = probe;
    this.#log = log;
    this.#count = count;
  }

  /** Restarts of the main server without persistence that had stopped it by `t`: the token counter's epoch. */
  #epoch(t: number): number {
    return this.#log.filter((r) => r.fault.type === 'redis-restart' && r.fault.server === 'main' && !r.error && r.end !== undefined && r.end <= t)
      .length;
  }

  /** One worker event, as it arrives (the fenced resource and the stuck probes work live). */
  add(tagged: TaggedEvent): void {
    this.events.push(tagged);
    const { event, worker, incarnation } = tagged;
    switch (event.type) {
      case 'acquired': {
        // An adopted hold is believed from the hand-off on: the handle stood for it in the gap.
        const from = event.adoptedFrom === undefined ? undefined : this.holds.get(event.adoptedFrom);
        const start = from?.end !== undefined ? Math.min(from.end, event.t) : event.t;
        const hold: Hold = {
          id: event.hold,
          worker,
          incarnation,
          kind: event.kind,
          names: event.names,
          mode: event.mode,
          owner: event.owner,
          t0: Math.min(event.t0, start),
          start,
          ttl: event.ttl,
          watchdog: event.watchdog,
          reentry: event.reentry,
          adoptedFrom: event.adoptedFrom,
          token: event.token,
          permits: event.permits,
          capped: event.capped,
          end: undefined,
          endKind: undefined,
        };
        this.holds.set(hold.id, hold);
        this.stats.holds += 1;
        if (hold.reentry) this.stats.reentries += 1;
        const owner = this.#owners.get(hold.owner) ?? { open: 0, ttl: 0, kind: hold.kind, names: new Set<string>() };
        owner.open += 1;
        owner.ttl = Math.max(owner.ttl, hold.ttl);
        for (const name of hold.names) owner.names.add(name);
        this.#owners.set(hold.owner, owner);
        if (hold.adoptedFrom !== undefined) {
          this.stats.adopted += 1;
          this.#handOffDone(hold.owner, event.t);
        }
        return;
      }
      case 'handoff': {
        this.stats.handOffs += 1;
        const owner = this.#owners.get(event.owner);
        if (!owner) return;
        owner.open += 1;
        this.#handOffs.set(event.owner, { worker, incarnation });
        return;
      }
      case 'adopt-failed':
        this.#handOffDone(event.owner, event.t);
        return;
      case 'release': {
        // Called: the holder stops acting as one now, whenever (and whether) the answer comes.
        const hold = this.holds.get(event.hold);
        if (!hold) return;
        // Its worker's death was seen first: the release was called and never answered.
        const diedAt = hold.endKind === 'killed' || hold.endKind === 'exit' ? hold.end : undefined;
        this.#ended(hold, event.t, 'release');
        if (diedAt !== undefined && hold.releaseOk === undefined) hold.unansweredUntil = diedAt;
        return;
      }
      case 'released': {
        this.#answer(event.hold, { n: 1, t0: event.t0, t: event.t, ok: event.ok, error: event.error, aborted: event.aborted ?? false });
        const hold = this.holds.get(event.hold);
        if (!hold) return;
        hold.releaseOk = event.ok;
        hold.unansweredUntil = undefined;
        if (!event.ok) {
          hold.releaseError = event.error;
          this.stats.releasesFailed += 1;
        }
        // Once it asks to release, a holder no longer acts as one.
        this.#ended(hold, event.t0, 'release');
        return;
      }
      case 'lost': {
        const hold = this.holds.get(event.hold);
        if (!hold) return;
        hold.lostReason = event.reason;
        if (event.reason === 'LockHandedOffError') {
          this.#ended(hold, event.t, 'handed-off');
          return;
        }
        if (event.reason === 'max-hold-time') this.stats.maxHoldTime += 1;
        this.stats.lost += 1;
        this.#ended(hold, event.t, 'lost');
        return;
      }
      case 'write': {
        this.stats.writes += 1;
        const hold = this.holds.get(event.hold);
        const key = `${event.name}#${hold ? this.#epoch(hold.t0) : 0}`;
        const highest = this.resource.get(key) ?? -Infinity;
        if (event.token < highest) this.#refused.push(event);
        else this.resource.set(key, event.token);
        return;
      }
      case 'wait':
        this.#waits.push(event);
        this.#waitWorker.set(event, worker);
        this.stats.waits += 1;
        if (event.outcome === 'timeout') this.stats.waitsTimedOut += 1;
        if (event.outcome === 'aborted') this.stats.waitsAborted += 1;
        if (event.outcome === 'error') this.stats.waitsFailed += 1;
        return;
      case 'attempt': {
        // The call may run in Redis whatever the worker hears: its lease bounds the key's life too.
        this.#attempts.set(event.owner, { t: event.t, ttl: event.ttl, waitMs: event.waitMs ?? 0 });
        const owner = this.#owners.get(event.owner);
        if (owner) owner.ttl = Math.max(owner.ttl, event.ttl);
        return;
      }
      case 'observed':
        this.observations.push(event);
        return;
      case 'retried':
        this.releaseStats.releaseRetries += 1;
        if (event.ok) this.releaseStats.releaseRetriesOk += 1;
        this.#answer(event.hold, { n: event.n, t0: event.t0, t: event.t, ok: event.ok, error: event.error, aborted: event.aborted });
        return;
      case 'owner-count':
        this.#askCount({ worker, event }, incarnation);
        return;
      case 'query':
        this.#queries.push({ worker, event });
        return;
      case 'stall': {
        const key = `${worker}#${incarnation}`;
        const goneAt = this.#gone.get(key);
        if (event.phase === 'end') {
          this.#openStalls.delete(key);
          this.#stallEnded({ worker, incarnation, event });
        } else if (goneAt !== undefined) {
          // Its worker was seen gone first: the stall lasted until then.
          this.#stallEnded({ worker, incarnation, event: { ...event, phase: 'end', t: Math.max(event.t0, goneAt) } }, true);
        } else this.#openStalls.set(key, { worker, incarnation, event });
        return;
      }
      case 'thread':
        countStallEvent(event, worker, this.stallStats);
        return;
      case 'ready':
      case 'done':
      case 'stuck':
        return;
    }
  }

  #stallEnded(stall: StallRecord, killed = false): void {
    this.#stalls.push(stall);
    countStallEvent(stall.event, stall.worker, this.stallStats);
    if (killed) this.stallStats.killed += 1;
  }

  #answer(hold: string, answer: ReleaseAnswer): void {
    const list = this.#answers.get(hold) ?? [];
    list.push(answer);
    this.#answers.set(hold, list);
  }

  /**
   * Asks Redis what it has for the owner (release-checks.ts judges the answer at the end): at
   * once, or, when releases were left to rlock's background retries, at the first quiet moment
   * within the lease.
   */
  #askCount(check: CountCheck, incarnation: number): void {
    const { kind, names, owner, final, unanswered } = check.event;
    if (!final && !this.#count) return;
    this.#counts.push(check);
    const asked = (async (): Promise<void> => {
      if (final && unanswered > 0 && !(await this.#quietMoment(check, incarnation))) return;
      if (final) {
        const held: (string | false | undefined)[] = [];
        for (const name of names) held.push(await this.#probe(kind, name, owner));
        if (held.includes(undefined)) return;
        const still = held.filter((h) => h !== false);
        check.held = still.length > 0 ? still.join('; ') : false;
      } else {
        const count = await this.#count!(kind, names[0]!, owner);
        if (count === undefined) return;
        check.count = count;
      }
      check.answeredAt = clock();
      if (final && unanswered === 0) this.#probedAlready(owner);
      // Past the lease, Redis lets the holds go on its own: nothing left to judge.
      if (check.quietSince !== undefined && check.answeredAt > this.#leaseStands(owner)) check.answeredAt = undefined;
    })();
    this.#probes.add(asked);
    void asked.finally(() => this.#probes.delete(asked));
  }

  /** Until when rlock keeps retrying the owner's releases (and Redis keeps its holds): its leases, by the holder's clock, less a margin. */
  #leaseStands(owner: string): number {
    let end = -Infinity;
    for (const hold of this.holds.values()) {
      if (hold.owner === owner) end = Math.max(end, hold.t0 + hold.ttl - holdDrift(hold.ttl) - QUIET_LEASE_MARGIN_MS);
    }
    return end;
  }

  /**
   * Waits (bounded by the owner's lease) for a moment when rlock's background retries of the
   * owner's rejected releases must have got through: no fault for QUIET_MS on the operation's
   * client's proxy to the main server, its worker or the main server (a refusal included). False
   * if none came in time, the worker is gone (its retries with it) or the run is stopping.
   */
  async #quietMoment(check: CountCheck, incarnation: number): Promise<boolean> {
    const { worker } = check;
    const { client, acl, t } = check.event;
    const until = this.#leaseStands(check.event.owner);
    const hits = (r: FaultRecord): boolean => {
      const f = r.fault;
      if ('proxies' in f) return f.proxies.some((p) => p.worker === worker && p.client === client && p.server === 'main');
      if ('worker' in f) return f.worker === worker;
      // Scripts refused only to the ACL user.
      return f.server === 'main' && (acl || f.type !== 'refuse-scripts');
    };
    for (;;) {
      const now = clock();
      if (now >= until || now >= this.#stoppingAt || this.#gone.has(`${worker}#${incarnation}`)) return false;
      // A swallow stays armed until the calls it catches come: it may hit a retry a while after it was set.
      const end = (r: FaultRecord): number => (r.end ?? Infinity) + (r.fault.type === 'swallow' ? QUIET_MS : 0);
      const quiet = !this.#log.some((r) => !r.error && hits(r) && r.start < now && end(r) > now - QUIET_MS);
      if (quiet && now - t >= QUIET_MS) {
        check.quietSince = now - QUIET_MS;
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The run stops its workers now: they close their clients, which ends rlock's background retries. */
  stopping(): void {
    this.#stoppingAt = clock();
  }

  /** A hand-off of `owner`'s hold is over (adopted, failed, or its worker died): the handle no longer keeps the owner. */
  #handOffDone(owner: string, t: number): void {
    if (!this.#handOffs.delete(owner)) return;
    this.#letOwner(owner, t);
  }

  /** A worker incarnation is gone (killed, or exited at the end): its open holds end at `t`. */
  workerGone(worker: number, incarnation: number, t: number, how: 'killed' | 'exit'): void {
    const key = `${worker}#${incarnation}`;
    this.#gone.set(key, t);
    // A stall its worker was in when it died lasted until then.
    const stall = this.#openStalls.get(key);
    if (stall) {
      this.#openStalls.delete(key);
      this.#stallEnded({ ...stall, event: { ...stall.event, phase: 'end', t: Math.max(stall.event.t0, t) } }, true);
    }
    for (const [owner, carrier] of [...this.#handOffs]) {
      if (carrier.worker === worker && carrier.incarnation === incarnation) this.#handOffDone(owner, t);
    }
    for (const hold of this.holds.values()) {
      if (hold.worker !== worker || hold.incarnation !== incarnation) continue;
      if (!hold.probed) this.#ended(hold, t, how);
      // Its release was called but not answered (its 'released' may still arrive after the exit).
      else if (hold.endKind === 'release' && hold.releaseOk === undefined) hold.unansweredUntil = t;
    }
  }

  #ended(hold: Hold, t: number, how: Hold['endKind']): void {
    if (hold.end !== undefined) {
      // A worker's last events may arrive after its exit was seen: the earlier end stands.
      if ((hold.endKind === 'killed' || hold.endKind === 'exit') && t < hold.end) {
        hold.end = t;
        hold.endKind = how;
      }
      // A MultiLock told `lost` lost one member: the others stay held (and renewed) until released.
      if (hold.kind === 'multi' && hold.endKind === 'lost' && how !== 'lost' && !hold.probed) this.#let(hold, t);
      return;
    }
    hold.end = t;
    hold.endKind = how;
    if (hold.kind === 'multi' && how === 'lost') return;
    this.#let(hold, t);
  }

  /** The hold is let go of in Redis from `t` on: when its owner's last one is, probe the lock later. */
  #let(hold: Hold, t: number): void {
    hold.probed = true;
    this.#letOwner(hold.owner, t);
  }

  /** One of `ownerId`'s holds (or a hand-off of it) is let go of at `t`: probe the lock when it was the last. */
  #letOwner(ownerId: string, t: number): void {
    const owner = this.#owners.get(ownerId);
    if (!owner) return;
    owner.open -= 1;
    if (owner.open > 0) return;
    this.#owners.delete(ownerId);
    // The owner holds nothing any more: within its lease (+ margin) Redis must agree. An owner
    // with a long lease (burst.ts) is asked first as early as any other, and again at its lease's
    // end only if it still held the lock then.
    const due = Math.max(0, t + Math.min(owner.ttl, TIMING.maxTtl) + STUCK_MARGIN_MS - (performance.timeOrigin + performance.now()));
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#stuckTimers.delete(ownerId);
      const probe = this.#probeOwner(ownerId, owner.kind, [...owner.names], t, owner.ttl);
      this.#probes.add(probe);
      void probe.finally(() => this.#probes.delete(probe));
    }, due);
    this.#timers.add(timer);
    this.#stuckTimers.set(ownerId, timer);
  }

  /**
   * Redis was asked, once every call of the owner was answered and every release resolved,
   * whether it still holds the owner (owner-count, final): the stuck probe due later could find
   * nothing more (no call of the owner is left to change the lock), so it is not waited for.
   */
  #probedAlready(ownerId: string): void {
    const timer = this.#stuckTimers.get(ownerId);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(timer);
    this.#stuckTimers.delete(ownerId);
  }

  async #probeOwner(owner: string, kind: Kind, names: string[], endedAt: number, ttl: number): Promise<void> {
    for (const name of names) {
      let held = await this.#probeAgain(kind, name, owner);
      const leaseEnd = endedAt + ttl + STUCK_MARGIN_MS - clock();
      if (held !== false && held !== undefined && leaseEnd > 0) {
        await new Promise((resolve) => setTimeout(resolve, leaseEnd));
        held = await this.#probeAgain(kind, name, owner);
      }
      // A re-entry called after the hold ended (one the worker never heard back from) holds it
      // for its own lease: ask again once that has run out too. An attempt whose answer was lost
      // or refused is sent again in the background for up to its lease after its wait ended: a
      // hold it made then (given back at once, but the lease it set on the key stays) counts too.
      const attempt = this.#attempts.get(owner);
      const due = attempt
        ? Math.max(endedAt, attempt.t + attempt.waitMs + attempt.ttl) + attempt.ttl + STUCK_MARGIN_MS - (performance.timeOrigin + performance.now())
        : 0;
      if (held !== false && held !== undefined && due > 0) {
        await new Promise((resolve) => setTimeout(resolve, due));
        held = await this.#probeAgain(kind, name, owner);
      }
      this.stats.probes += 1;
      if (held !== false && held !== undefined) {
        const message = `lock "${name}" (${kind}) still held by ${owner} ${Math.round(clock() - endedAt)} ms after its holder stopped holding it (lease ${ttl} ms + ${STUCK_MARGIN_MS} ms margin): ${held}`;
        // How long it stays: until a lease runs out, or renewed on?
        const since = clock();
        while (held !== false && clock() - since < STUCK_FOLLOW_MS) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          held = await this.#probe(kind, name, owner);
        }
        const after = held === false ? `; free ${Math.round(clock() - since)} ms later` : `; still held ${STUCK_FOLLOW_MS} ms later`;
        this.violations.push({ kind: 'stuck', name, at: endedAt, message: message + after });
      }
    }
  }

  /** Whether `owner` holds `name`; undefined if the server could not be asked (it may be restarting: asked a few times). */
  async #probeAgain(kind: Kind, name: string, owner: string): Promise<string | false | undefined> {
    let held: string | false | undefined;
    for (let tries = 0; tries < 10 && held === undefined; tries += 1) {
      held = await this.#probe(kind, name, owner);
      if (held === undefined) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return held;
  }

  /** Waits for the probes still due (bounded by the longest lease). */
  async drainProbes(): Promise<void> {
    // A probe may be asked again once a late re-entry's lease ran out too.
    const deadline = Date.now() + 3 * (TIMING.longLeaseMax + STUCK_MARGIN_MS) + STUCK_FOLLOW_MS + 8_000;
    while ((this.#timers.size > 0 || this.#probes.size > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const timer of this.#timers) clearTimeout(timer);
  }

  /** Runs the offline checks over the whole run. */
  finish(log: readonly FaultRecord[]): void {
    const freezes = log.filter((r) => r.fault.type === 'sigstop' && !r.error && r.end !== undefined);
    const restarts = log.filter((r) => r.fault.type === 'redis-restart' && !r.error && r.end !== undefined);
    // Freezes and stalls: the stretches each worker's event loop ran nothing (stall-checks.ts).
    const pauses = pausesOf(freezes, this.#stalls, this.holds, log, this.stallStats);
    this.#pauses = pauses;
    for (const hold of this.holds.values()) this.#effectiveEnd(hold, pauses, restarts);
    this.#checkExclusion();
    this.#countUnanswered();
    this.#checkWaits(pauses);
    this.#checkTokens(restarts);
    this.#checkRefusedWrites();
    checkStalls(this.holds, pauses, this.stallStats, this.violations);
    // The checks below allow for a frozen worker: a stalled one is the same to them.
    const paused = [...log, ...stallsAsFreezes(this.#stalls)];
    this.semaphores = checkSemaphores(this.holds.values(), this.events, paused, this.violations);
    this.observerStats = checkObservers(this.observations, this.holds, log, this.violations);
    checkReleases(this.holds, this.#answers, this.#counts, this.#queries, paused, this.violations, this.releaseStats);
  }

  /**
   * A write the resource refused is fencing at work when its holder no longer held the lock by
   * the checks' account (a frozen worker writing as it wakes, before its clock tells it). One
   * made inside its effective hold means another holder overlapped it: a violation.
   */
  #checkRefusedWrites(): void {
    for (const write of this.#refused) {
      this.stats.fencedOff += 1;
      const hold = this.holds.get(write.hold);
      if (hold && hold.effEnd !== undefined && write.t > hold.effEnd) continue;
      this.violations.push({
        kind: 'fenced-off',
        name: write.name,
        at: write.t,
        message: `lock "${write.name}": the resource refused token ${write.token} of hold ${write.hold}, written while it held the lock`,
      });
    }
  }

  /**
   * Where a hold ends for the overlap checks:
   * - a worker frozen (SIGSTOP) at s and woken at c acts on nothing after s; a hold it still had
   *   then that ends (lost or released) within WAKE_MARGIN_MS of c counts as ended at s. A hold
   *   that outlived the freeze longer had a lease that outlived it, and counts in full. A stall of
   *   its event loop is the same, but for the holds its renewal threads renewed throughout
   *   (stall-checks.ts), which count in full.
   * - a restart without persistence (stop at r0, the old server gone at r1) loses every key of
   *   that server: a hold whose acquisition was sent before r1 and that was still believed at r0
   *   counts as ended at r0 (its holder is told later, by renewal or its clock).
   */
  #effectiveEnd(hold: Hold, pauses: readonly Pause[], restarts: readonly FaultRecord[]): void {
    let end = hold.end ?? Infinity;
    for (const pause of pauses) {
      if (pause.worker !== hold.worker || pause.guarded.has(hold.id)) continue;
      // A hold taken between two merged pauses (the worker ran then) ends where the next one began.
      const s = pause.starts.find((start) => start > hold.start);
      const c = pause.end;
      if (s !== undefined && end > s && end <= c + WAKE_MARGIN_MS) {
        end = s;
        hold.cutBy = `${pause.froze ? 'frozen' : 'stalled'} at ${s.toFixed(1)}`;
        if (pause.froze) this.stats.cutByFreeze += 1;
        else this.stats.cutByStall += 1;
      }
    }
    for (const restart of restarts) {
      if (restart.fault.type !== 'redis-restart' || !serversOf(hold.kind).includes(restart.fault.server)) continue;
      // A RedLock master stays down longer than any lease before it restarts empty: nothing to cut.
      if (restart.fault.server !== 'main') continue;
      const r0 = restart.start;
      const r1 = restart.end!;
      if (hold.t0 < r1 && end > r0) {
        end = Math.min(end, r0);
        hold.cutBy = `server restarted without persistence at ${r0.toFixed(1)}`;
        this.stats.cutByRestart += 1;
      }
    }
    hold.effEnd = end;
  }

  #checkExclusion(): void {
    const byName = new Map<string, Hold[]>();
    for (const hold of this.holds.values()) {
      // Permits may overlap up to the limit: semaphore-check.ts counts them.
      if (hold.effEnd! <= hold.start || hold.kind === 'semaphore') continue;
      for (const name of hold.names) {
        const list = byName.get(name) ?? [];
        list.push(hold);
        byName.set(name, list);
      }
    }
    for (const [name, list] of byName) {
      list.sort((a, b) => a.start - b.start);
      // Sweep: every hold against the earlier ones still open when it began.
      const open: Hold[] = [];
      for (const hold of list) {
        for (let i = open.length - 1; i >= 0; i -= 1) {
          const earlier = open[i]!;
          if (earlier.effEnd! <= hold.start) {
            // The earlier hold ended before this one began; a lost one: by how much it was first.
            if (earlier.endKind === 'lost' && earlier.owner !== hold.owner && !earlier.cutBy) {
              this.stats.minLostLead = Math.min(this.stats.minLostLead, hold.start - earlier.effEnd!);
            }
            open.splice(i, 1);
            continue;
          }
          if (earlier.owner === hold.owner) continue;
          if (earlier.mode === 'read' && hold.mode === 'read') continue;
          const overlap = Math.min(earlier.effEnd!, hold.effEnd!) - hold.start;
          const told = earlier.endKind === 'lost';
          // An acquisition that resolved only to be lost at once: its answer came after its lease had run out.
          const bornLost = hold.endKind === 'lost' && hold.effEnd! - hold.start < LATE_GRANT_MS;
          this.violations.push({
            kind: told || bornLost ? 'told-late' : 'exclusion',
            name,
            at: earlier.start,
            until: Math.max(hold.start, Math.min(hold.effEnd!, earlier.effEnd!)),
            message: bornLost
              ? `lock "${name}": hold ${hold.id} (${hold.owner}, ${hold.kind}) was acquired (its acquisition resolved) while ` +
                `hold ${earlier.id} (${earlier.owner}) held the lock, and told it lost the lock (${hold.lostReason}) only ` +
                `${(hold.effEnd! - hold.start).toFixed(1)} ms later: the acquisition resolved after its own lease had run out`
              : told
                ? `lock "${name}": hold ${earlier.id} (${earlier.owner}) was told it lost the lock (${earlier.lostReason}) ` +
                  `${(earlier.effEnd! - hold.start).toFixed(1)} ms AFTER hold ${hold.id} (${hold.owner}) acquired it${this.#pausesOf(earlier)}`
                : `lock "${name}": holds ${earlier.id} (${earlier.owner}, ${earlier.mode}) and ${hold.id} (${hold.owner}, ${hold.mode}) ` +
                  `overlap by ${overlap.toFixed(1)} ms (the first ended by ${earlier.endKind ?? 'nothing'}${earlier.cutBy ? `, ${earlier.cutBy}` : ''})`,
          });
        }
        open.push(hold);
      }
    }
  }

  /** The pauses of `hold`'s worker while it held, for a report: a told-late hold kept through one was its thread's to renew. */
  #pausesOf(hold: Hold): string {
    const during = this.#pauses.filter((p) => p.worker === hold.worker && p.start < (hold.end ?? Infinity) && p.end > hold.start);
    if (during.length === 0) return '';
    const told = during.map(
      (p) => `${p.froze ? 'frozen' : 'stalled'} ${(p.end - p.start).toFixed(0)} ms from ${p.start.toFixed(1)}${p.guarded.has(hold.id) ? ', the hold renewed by its thread then' : ''}`,
    );
    return ` (its worker ${told.join('; ')})`;
  }

  /**
   * Releases whose answer never came (the worker died first), and how many of them another owner
   * acquired the lock after: the release had run in Redis, the holder just never heard back.
   */
  #countUnanswered(): void {
    const holds = [...this.holds.values()];
    for (const hold of holds) {
      const until = hold.unansweredUntil;
      if (until === undefined || hold.end === undefined) continue;
      this.stats.unansweredReleases += 1;
      const taken = holds.find(
        (other) =>
          other.owner !== hold.owner &&
          other.start > hold.end! &&
          other.start < until &&
          other.names.some((name) => hold.names.includes(name)) &&
          !(other.mode === 'read' && hold.mode === 'read'),
      );
      if (!taken) continue;
      this.stats.acquiredDuringUnanswered += 1;
      this.takenWhileUnanswered.push({ hold, other: taken, diedAt: until });
    }
  }

  #checkWaits(pauses: readonly Pause[]): void {
    for (const wait of this.#waits) {
      const worker = this.#waitWorker.get(wait)!;
      let frozen = 0;
      for (const pause of pauses) {
        if (pause.worker !== worker) continue;
        // A frozen (or stalled) process's timers fire late: the whole pause, plus its wake-up, is not the wait's fault.
        const overlap = Math.min(wait.t, pause.end + WAKE_MARGIN_MS) - Math.max(wait.t0, pause.start);
        if (overlap > 0) frozen += overlap + WAKE_MARGIN_MS;
      }
      // A single attempt (waitTime 0) waits up to SINGLE_ATTEMPT_MS for its answer, per member.
      const budget = wait.budget === 0 ? SINGLE_ATTEMPT_MS * Math.max(1, wait.names.length) : wait.budget;
      const over = wait.t - wait.t0 - frozen - budget;
      if (over > this.stats.longestWaitOverBudget) {
        this.stats.longestWaitOverBudget = over;
        this.stats.longestWait = `${wait.kind} op ${wait.op} budget ${wait.budget} ms: ${wait.outcome}`;
      }
      if (over > WAIT_MARGIN_MS) {
        this.violations.push({
          kind: 'wait-overrun',
          name: wait.names[0],
          at: wait.t0,
          until: wait.t,
          message:
            `${wait.kind} wait on ${wait.names.join('+')} (op ${wait.op}, budget ${wait.budget} ms) ended ` +
            `${over.toFixed(0)} ms past its budget: ${wait.outcome}${wait.error ? ` (${wait.error})` : ''}`,
        });
      }
    }
  }

  /**
   * Fencing: per lock, every fresh acquisition's token is greater than the previous one's (a
   * restart without persistence loses the counter: a new epoch begins, and acquisitions
   * across it are not compared); a re-entry gets its owner's token.
   */
  #checkTokens(restarts: readonly FaultRecord[]): void {
    const byName = new Map<string, Hold[]>();
    const mainRestarts = restarts.filter((r) => r.fault.type === 'redis-restart' && r.fault.server === 'main');
    // An election's epoch is a fencing token too (tools/torture/election.ts).
    const fenced = (kind: Kind): boolean => kind === 'fenced' || kind === 'election';
    const fresh = [...this.holds.values()].filter((h) => fenced(h.kind) && !h.reentry && h.adoptedFrom === undefined);
    // A nested acquisition whose owner no longer believed its outer hold took the lock afresh.
    const outerOf = (hold: Hold): Hold | undefined =>
      fresh.find((h) => h.owner === hold.owner && h.start <= hold.start && (h.end ?? Infinity) > hold.start);
    for (const hold of this.holds.values()) {
      if (!fenced(hold.kind) || hold.token === undefined) continue;
      if (hold.adoptedFrom !== undefined) {
        // The same hold, moved: the same token.
        const from = this.holds.get(hold.adoptedFrom);
        if (from && from.token !== hold.token) {
          this.violations.push({
            kind: 'token-reentry',
            name: hold.names[0],
            at: hold.start,
            message: `lock "${hold.names[0]}": adopted hold ${hold.id} got token ${hold.token}, the handed-off hold ${from.id} had ${from.token}`,
          });
        }
        continue;
      }
      if (!hold.reentry || !outerOf(hold)) {
        const straddles = mainRestarts.some((r) => hold.t0 < r.end! && hold.start > r.start);
        if (straddles) continue;
        const list = byName.get(hold.names[0]!) ?? [];
        list.push(hold);
        byName.set(hold.names[0]!, list);
      }
    }
    for (const hold of this.holds.values()) {
      if (!fenced(hold.kind) || !hold.reentry) continue;
      const outer = outerOf(hold);
      // A restart without persistence between the outer hold and the re-entry lost the hold and
      // the counter: the re-entry took the lock afresh, with a token of the new epoch.
      const restartedBetween = outer !== undefined && mainRestarts.some((r) => r.start < hold.start && r.end! > outer.start);
      if (outer && outer.token !== hold.token && !restartedBetween) {
        this.violations.push({
          kind: 'token-reentry',
          name: hold.names[0],
          at: hold.start,
          message: `lock "${hold.names[0]}": re-entry ${hold.id} got token ${hold.token} while its owner's hold ${outer.id} (token ${outer.token}) was believed`,
        });
      }
    }
    for (const [name, list] of byName) {
      list.sort((a, b) => a.start - b.start);
      for (let i = 1; i < list.length; i += 1) {
        const prev = list[i - 1]!;
        const cur = list[i]!;
        const epoch = (t: number): number => mainRestarts.filter((r) => r.end! <= t).length;
        if (epoch(prev.t0) !== epoch(cur.t0)) continue;
        // One owner's holds back to back: a re-entry sent before its outer hold was lost and run in
        // Redis before the client let go of that hold continues the owner's hold there (no other
        // owner in between), with its token.
        if (cur.owner === prev.owner && cur.token === prev.token) continue;
        if (cur.token! <= prev.token!) {
          this.violations.push({
            kind: 'token-order',
            name,
            at: prev.start,
            until: cur.start,
            message: `lock "${name}": hold ${cur.id} got token ${cur.token} after hold ${prev.id} got ${prev.token}`,
          });
        }
      }
    }
  }
}
