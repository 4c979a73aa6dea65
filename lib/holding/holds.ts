import { currentContext, ownerId } from '../context.js';
import { LockLostError, type LockError, type LockLostReason } from '../errors.js';
import type { HoldKind } from '../kinds.js';
import type { RenewTarget } from '../scripts/script-types.js';
import { holdEnded, holdStarted } from '../telemetry/hold-channels.js';
import { contextOfOwner, HoldCalls } from './hold-calls.js';
import { Hold, holdDrift, type HoldEnd } from './hold.js';
import { UnscopedOwners } from './unscoped-owners.js';

export type { RenewTarget } from '../scripts/script-types.js';
export { Hold, holdDrift, type HoldEnd, type HoldObserver, type HoldState } from './hold.js';

/** Who renews watchdog-mode holds besides the watchdog: the renewal thread (lib/renewal-thread). */
export interface HoldRenewer {
  track(hold: Hold): void;
  untrack(hold: Hold): void;
  capped(hold: Hold, at: number): void;
  sync(hold: Hold): void;
  syncAll(): void;
}

export interface HoldsListener {
  /** The hold was lost (renewal found it gone or taken, or its clock ran out): tell the holder. */
  lost(hold: Hold, reason: LockLostReason): void;
}

/** An acquisition Redis confirmed. */
export interface Acquisition {
  readonly kind: HoldKind;
  readonly lockId: string;
  readonly owner: string;
  readonly target: RenewTarget;
  readonly unscoped: boolean;
  /** A RedLock's node hold (see Hold.quiet), renewed at most `maxRenewals` times. */
  readonly quiet?: boolean;
  readonly maxRenewals?: number;
  /** A Permit's count of permits (default 1). */
  readonly permits?: number;
  /** How to let go of holds the clock ended (see Hold.letGo). */
  readonly letGo?: (count: number) => void;
  /** performance.now() when the winning attempt was sent. */
  readonly sentAt: number;
  /** The lease it set in Redis, ms. */
  readonly ttlMs: number;
  readonly watchdog: boolean;
  /** The hold count Redis reported (an adopted hold's); default: one more. */
  readonly count?: number;
}

/**
 * Every hold of one client, and the holder's clock: ONE timer, set to the earliest moment a hold
 * may be gone in Redis. When it passes without a newer confirmation, the hold's Leases abort and
 * `lost` ('expired') is emitted — whatever the connection is doing, and before the key can expire
 * in Redis, so before anyone else can take the lock. A hold left to expire (a fixed lease never
 * released) is forgotten then, so unreleased holds cost no memory.
 */
export class Holds {
  readonly #holds = new Map<string, Hold>();
  /** Per lock: the owners of the holds taken outside any context, latest last. */
  readonly unscoped = new UnscopedOwners();
  readonly #listener: HoldsListener;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;
  /** Composite holds (a RedLock's) that end with this client. */
  readonly #closeHooks = new Set<() => void>();
  #closed = false;
  /** The renewal thread, if the client has one: told of every hold it renews, asked before the clock judges. */
  #renewer: HoldRenewer | undefined;
  /** Each owner's calls under way on each lock, and its hand-offs: they exclude each other. */
  readonly calls = new HoldCalls();

  /** `clientId`: the LockClient's, for telemetry. */
  constructor(listener: HoldsListener, readonly clientId = '') {
    this.#listener = listener;
  }

  /** The hold of `owner` on the lock, after what the renewal thread did to it is applied. */
  get(lockId: string, owner: string): Hold | undefined {
    const id = holdId(lockId, owner);
    if (this.#renewer) {
      const hold = this.#holds.get(id);
      if (hold) this.#renewer.sync(hold);
    }
    return this.#holds.get(id);
  }

  /** From now on `renewer` renews watchdog-mode holds (those held now too). */
  useRenewer(renewer: HoldRenewer): void {
    this.#renewer = renewer;
    for (const hold of this.watched()) renewer.track(hold);
  }

  /**
   * Runs the holder's clock on `hold` now if its time has passed, as its timer would: the timer
   * lags behind a blocked event loop, and an acquisition of the owner sent after the clock ran out
   * must take the lock afresh, not count as a re-entry of a hold Redis may have dropped meanwhile.
   */
  judgeDue(hold: Hold): void {
    if (!this.isCurrent(hold)) return;
    this.#renewer?.sync(hold);
    if (hold.validUntil <= performance.now()) this.#expire(hold);
  }

  /** A hold's maxHoldTime deadline (performance.now() ms) was set: no renewal after it. */
  capped(hold: Hold, at: number): void {
    this.#renewer?.capped(hold, at);
  }

  /** The holds the watchdog renews now. */
  *watched(): Iterable<Hold> {
    for (const hold of this.#holds.values()) {
      if (hold.watchdog && hold.held && hold.renewalsLeft !== 0) yield hold;
    }
  }

  /** True while `hold` is the client's current record of its owner's holds. */
  isCurrent(hold: Hold): boolean {
    return this.#holds.get(hold.id) === hold;
  }

  /** Counts a confirmed acquisition (or re-entry) and moves the holder's clock. */
  acquired(a: Acquisition): Hold {
    const id = holdId(a.lockId, a.owner);
    let hold = this.#holds.get(id);
    if (!hold || hold.state === 'released') {
      if (hold) {
        // Released, its record kept for its lease: a new hold replaces it.
        Hold.move(hold, 'ended');
        holdEnded(this.clientId, hold, undefined);
      }
      // The context is read synchronously with the acquisition's answer, in the caller's context.
      const { quiet, maxRenewals, permits, letGo } = a;
      hold = new Hold(id, a.kind, a.lockId, a.owner, a.target, a.unscoped, { quiet, maxRenewals, permits, letGo, context: contextOfOwner(this.clientId, a.owner) });
      this.#holds.set(id, hold);
      if (a.unscoped) this.unscoped.remember(a.lockId, a.owner);
      holdStarted(this.clientId, hold);
    }
    hold.count = a.count ?? hold.count + 1;
    Hold.move(hold, 'held');
    if (a.watchdog) hold.watchdog = true;
    this.confirmed(hold, a.sentAt, a.ttlMs);
    if (hold.watchdog && hold.renewalsLeft !== 0) this.#renewer?.track(hold);
    return hold;
  }

  /** Redis confirmed the hold with a lease of `ttlMs` for a call sent at `sentAt`. */
  confirmed(hold: Hold, sentAt: number, ttlMs: number): void {
    // Re-entry never shortens: the key's TTL only grows (see extend_ttl in the scripts).
    hold.validUntil = Math.max(hold.validUntil, sentAt + ttlMs - holdDrift(ttlMs));
    this.#arm(hold.validUntil);
  }

  /** A watchdog renewal of the hold was confirmed (sent at `sentAt`, lease `ttlMs`). */
  renewed(hold: Hold, sentAt: number, ttlMs: number): void {
    this.confirmed(hold, sentAt, ttlMs);
    if (hold.renewalsLeft !== undefined) hold.renewalsLeft = Math.max(0, hold.renewalsLeft - 1);
    if (hold.observers) for (const observer of hold.observers) observer.renewed?.(hold);
  }

  /**
   * Its last release is sent (or the hold is kept in Redis to its lease instead): no longer
   * renewed; the owner's next acquisition waits for its releases (Hold.releases).
   */
  lastReleaseSent(hold: Hold): void {
    Hold.move(hold, 'ending');
    this.#renewer?.untrack(hold);
  }

  /** A release retried in the background was answered: `left` holds remain (none: `released`). */
  answered(hold: Hold, left: number): void {
    hold.count = Math.max(0, left);
    if (hold.count === 0) {
      Hold.move(hold, 'released');
      this.#renewer?.untrack(hold);
    }
  }

  /**
   * Forgets the hold (released, lost, or gone with its lease) and tells its observers why.
   * `letGoSent`: the holder's clock ended it and let go of it in Redis.
   */
  end(hold: Hold, why?: HoldEnd, letGoSent = false): void {
    if (this.#holds.get(hold.id) !== hold) return;
    this.#holds.delete(hold.id);
    this.#renewer?.untrack(hold);
    Hold.move(hold, letGoSent ? 'let-go' : 'ended');
    holdEnded(this.clientId, hold, why);
    if (hold.unscoped) this.unscoped.forget(hold.lockId, hold.owner);
    if (hold.observers) for (const observer of hold.observers) observer.ended?.(hold, why);
  }

  /** The hold is lost: forget it, abort its Leases with `error`, and tell the listener. */
  lose(hold: Hold, reason: LockLostReason, error: LockError, letGoSent = false): void {
    if (!this.isCurrent(hold)) return;
    this.end(hold, reason, letGoSent);
    if (hold.quiet) return;
    for (const lease of hold.leases) lease.abort(error);
    this.#listener.lost(hold, reason);
  }

  /**
   * Calls `onClose` when this client closes (at once if it has); the returned function stops
   * that. A RedLock's hold ends with the client that speaks for it.
   */
  whenClosed(onClose: () => void): () => void {
    if (this.#closed) {
      onClose();
      return () => undefined;
    }
    this.#closeHooks.add(onClose);
    return () => this.#closeHooks.delete(onClose);
  }

  /**
   * The owner whose holds of a lock the current context's queries (and a RedLock's unlock) concern:
   * the context's own, none once it handed its hold of `lockKey` off (its owner id is the
   * adopter's now, whoever that is), or outside any context the latest unscoped one of `lockId`.
   * A map look-up, no call to Redis.
   */
  currentOwner(lockId: string, lockKey: string): string | undefined {
    const context = currentContext();
    if (!context) return this.unscoped.latest(lockId);
    return this.calls.handedOff(context, lockKey) ? undefined : ownerId(this.clientId, context.id);
  }

  /**
   * The client closes: watchdog holds will not be renewed any more, so their Leases abort with
   * `error`; fixed leases keep their clock and are told when they run out.
   */
  close(error: LockError): void {
    this.#closed = true;
    for (const onClose of [...this.#closeHooks]) onClose();
    for (const hold of [...this.#holds.values()]) {
      if (!hold.watchdog) continue;
      this.end(hold, 'closed');
      for (const lease of hold.leases) lease.abort(error);
    }
  }

  /** Makes the one timer fire no later than `at`. */
  #arm(at: number): void {
    if (this.#timer && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, at - performance.now()));
    this.#timer.unref();
  }

  #tick(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    // What the renewal thread confirmed while this timer waited (maybe behind a blocked loop) counts first.
    this.#renewer?.syncAll();
    // Timers may fire a fraction of a ms early.
    const now = performance.now() + 1;
    let next = Infinity;
    for (const hold of [...this.#holds.values()]) {
      if (hold.validUntil > now) next = Math.min(next, hold.validUntil);
      else this.#expire(hold);
    }
    if (next !== Infinity) this.#arm(next);
  }

  #expire(hold: Hold): void {
    // A release under way, or a fixed lease nobody holds a Lease of: nobody to tell.
    if (!hold.held || (!hold.watchdog && hold.leases.size === 0 && !hold.quiet)) {
      this.end(hold, hold.count === 0 ? undefined : 'expired');
      return;
    }
    const error = new LockLostError(
      `${hold.object} "${hold.target.name}" may have expired: no renewal or acquisition was confirmed within its lease`,
      'expired',
      { lockName: hold.target.name },
    );
    // The holder is told it lost the lock. A renewal that ran in Redis but whose answer never came
    // may still keep it there: let go of it, so that no hold outlives what the client believes
    // (the owner asking again must take the lock afresh, not re-enter a hold it was told it lost).
    hold.letGo?.(hold.count);
    this.lose(hold, 'expired', error, hold.letGo !== undefined);
  }
}

function holdId(lockId: string, owner: string): string {
  return `${lockId}\u0000${owner}`;
}
