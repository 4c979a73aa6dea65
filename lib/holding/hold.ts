import type { LockContext } from '../context.js';
import type { LockLostReason, ObjectKind } from '../errors.js';
import { KINDS, type HoldKind } from '../kinds.js';
import { HOLD_DRIFT_FACTOR, HOLD_DRIFT_MS } from '../options.js';
import type { RenewTarget } from '../scripts/script-types.js';
import { NO_LEASES, type HoldLease } from './hold-leases.js';
import type { PendingRelease } from './pending-release.js';

/**
 * Where a hold is in its life. Only `Holds` moves it, along HOLD_TRANSITIONS.
 * - `held`: confirmed by Redis, on the holder's clock, renewed by the watchdog in watchdog mode.
 * - `ending`: its last release is under way, or failed and is retried: no longer renewed; an
 *   acquisition of its owner that Redis confirms makes it `held` again.
 * - `released`: a release retried in the background left no hold; the record stays until its
 *   lease is over, or until the retried release collects the answer.
 * - `ended`: forgotten (released, lost, handed off, replaced, or its client closed).
 * - `let-go`: ended by the holder's clock, which let go of it in Redis: a re-entry sent before
 *   then may have been let go too.
 */
export type HoldState = 'held' | 'ending' | 'released' | 'ended' | 'let-go';

/** The moves a hold may make; anything else is a bug in rlock (IllegalHoldTransition). */
export const HOLD_TRANSITIONS: Readonly<Record<HoldState, readonly HoldState[]>> = {
  held: ['ending', 'released', 'ended', 'let-go'],
  ending: ['held', 'released', 'ended'],
  released: ['ending', 'ended'],
  ended: [],
  'let-go': [],
};

/** A hold was moved where its state table does not lead: an internal error, never the caller's. */
export class IllegalHoldTransition extends Error {
  constructor(
    readonly from: HoldState,
    readonly to: HoldState,
    lockName: string,
  ) {
    super(`rlock internal error: a hold of "${lockName}" cannot go from ${from} to ${to}`);
    this.name = 'IllegalHoldTransition';
  }
}

/** Why a hold ended, for its observers: undefined when it was released. */
export type HoldEnd = LockLostReason | 'closed' | undefined;

/**
 * Follows one hold from outside: a MultiLock (to forget its set) or a RedLock (whose node holds
 * are renewed by their clients' watchdogs, and which is lost when too few of them remain).
 */
export interface HoldObserver {
  /** The watchdog's renewal of the hold was confirmed. */
  renewed?(hold: Hold): void;
  /** The hold ended: released, lost, expired, or its client closed. */
  ended?(hold: Hold, why: HoldEnd): void;
}

/** How a hold starts, beyond its identity. */
export interface HoldInit {
  /** A RedLock's node hold (see Hold.quiet). */
  readonly quiet?: boolean | undefined;
  /** Renewals the watchdog may make (RedLock `maxRenewals`); undefined: no cap. */
  readonly maxRenewals?: number | undefined;
  /** A Permit's count of permits (default 1). */
  readonly permits?: number | undefined;
  /** How to let go of holds the clock ended (see Hold.letGo). */
  readonly letGo?: ((count: number) => void) | undefined;
  readonly context?: LockContext | undefined;
}

/** What the client knows of one owner's holds on one lock (re-entries share it). */
export class Hold {
  #state: HoldState = 'held';
  /** Holds confirmed by Redis: each needs one release. */
  count = 0;
  /** Renewed by the watchdog: some acquisition of it was in watchdog mode. */
  watchdog = false;
  /**
   * The holder's clock (performance.now() ms): the send time of the latest acquisition or
   * renewal Redis confirmed, plus its lease, minus the drift margin. Past it the hold may be
   * gone in Redis.
   */
  validUntil = 0;
  /** Renewals the watchdog may still make (RedLock `maxRenewals`, 0 once capped); undefined: no cap. */
  renewalsLeft: number | undefined;
  /** Releases sent and not yet answered: a renewal that finds the lock gone meanwhile is no loss. */
  releasing = 0;
  /**
   * Releases sent and not yet answered or given up (first tries and background retries): the
   * owner's next acquisition waits for all of them (acquire-in-time.ts), since any of them may be
   * the one that ends the hold in Redis, and a resend of it must not find a later hold.
   */
  releases: PendingRelease[] | undefined;
  /** Releases of `unlock()` (no Lease) whose try failed, oldest first: `unlock()` again collects them. */
  unlockRetries: PendingRelease[] | undefined;
  /** Leases to abort when the hold is lost (NO_LEASES until one is added: most holds have none). */
  leases: ReadonlySet<HoldLease> = NO_LEASES;
  /** Told when the hold is renewed or ends (see HoldObserver). */
  observers: HoldObserver[] | undefined;
  /** `rlock:hold:start` was published: `rlock:hold:end` is due once (telemetry/hold-channels.ts). */
  announced = false;
  /** performance.now() when the owner's first hold was confirmed: `released` tells `heldMs` from it. */
  readonly since = performance.now();
  /** A node hold of a RedLock: its loss is no news by itself (no `lost`, no `renewed` event); its observer decides. */
  readonly quiet: boolean;
  /** Permits the hold is (a Permit's count, 1 for a lock). */
  readonly permits: number;
  /** Releases `count` holds of the owner in the background, nobody waiting (see Holds#expire). */
  readonly letGo: ((count: number) => void) | undefined;
  /** The lock context the owner id is of, in the process that took the hold: its hand-off bars that context. */
  readonly context: LockContext | undefined;

  constructor(
    readonly id: string,
    readonly kind: HoldKind,
    /** The lock and kind, as `${kind}\0${lock key}`: where unscoped owners are listed. */
    readonly lockId: string,
    readonly owner: string,
    readonly target: RenewTarget,
    /** Taken outside any lock context: `unlock()` finds it through the unscoped list. */
    readonly unscoped: boolean,
    init: HoldInit = {},
  ) {
    this.quiet = init.quiet === true;
    this.permits = init.permits ?? 1;
    this.renewalsLeft = init.maxRenewals;
    this.letGo = init.letGo;
    this.context = init.context;
  }

  /** What messages call the object the hold is on: a permit is a hold on a semaphore. */
  get object(): ObjectKind {
    return KINDS[this.kind].object;
  }

  get state(): HoldState {
    return this.#state;
  }

  /** Held here: confirmed, no last release under way, not ended. */
  get held(): boolean {
    return this.#state === 'held';
  }

  /** Ended by the holder's clock, which let go of it in Redis. */
  get letGoSent(): boolean {
    return this.#state === 'let-go';
  }

  /** No renewal from now on (its maxHoldTime, a RedLock's cap). */
  stopRenewing(): void {
    this.renewalsLeft = 0;
  }

  /** Calls `observer` when the hold is renewed or ends. */
  observe(observer: HoldObserver): void {
    (this.observers ??= []).push(observer);
  }

  /**
   * Moves the hold to `to` along HOLD_TRANSITIONS (staying put is no move). Holds calls it.
   * @internal
   * @throws IllegalHoldTransition where the table does not lead.
   */
  static move(hold: Hold, to: HoldState): void {
    const from = hold.#state;
    if (from === to) return;
    if (!HOLD_TRANSITIONS[from].includes(to)) throw new IllegalHoldTransition(from, to, hold.target.name);
    hold.#state = to;
  }
}

/** The margin the holder's clock keeps before a lease of `ttlMs` can run out in Redis. */
export function holdDrift(ttlMs: number): number {
  return ttlMs * HOLD_DRIFT_FACTOR + HOLD_DRIFT_MS;
}
