import { currentContext, newContextId, ownerId } from '../context.js';
import type { LockCore } from '../core.js';
import { LockAcquireTimeoutError, LockNotHeldError } from '../errors.js';
import type { Hold, RenewTarget } from '../holding/holds.js';
import { Lease } from '../lease/lease.js';
import { checkFunction, checkLockArgs, checkTryLockArgs, checkWaitOptions, WATCHDOG_LEASE } from '../validate.js';
import type { Acquired } from '../waiting/wait.js';
import { answeredBefore, releaseHold, type ReleaseTicket, type SendRelease } from '../holding/release-hold.js';
import { leaseOfHold } from '../lease/lease-of-hold.js';
import { movesOf, releaseWhole } from '../lease/lease-moves.js';
import { recordHold } from '../holding/record-hold.js';
import { KINDS, lockIdOf, type HoldKind } from '../kinds.js';
import type { LeaseHandleKind } from '../lease/lease-handle.js';
import { OWNER_CALLS, type OwnerCalls } from '../owner-calls.js';
import { isReleaseTraced, traceRelease } from '../telemetry/tracing.js';
import { runWithLease } from '../lease/run-with-lease.js';
import type { LockWaitOptions, RLock, SignalOptions } from './lock-interfaces.js';
import { acquireInTime, type AcquireCall } from './acquire-in-time.js';
import { sendAttempt, type AttemptCalls } from './lost-attempt.js';
import { LockQueries } from './lock-queries.js';
import type { CallRequest, HeldRequest, HoldsLeft } from '../scripts/registry.js';

const isAcquired = (acquired: Acquired | false): boolean => acquired !== false;
const nothing = (): void => undefined;

/**
 * What every lock kind shares: owner resolution (contexts and unscoped holds), argument
 * checks, watchdog and event bookkeeping, leases, withLock/acquire; the read-only queries come
 * from LockQueries, one acquisition call's attempts from acquireInTime (acquire-in-time.ts).
 * A kind supplies how to acquire (with its waiting strategy) and how to release.
 */
export abstract class BaseLock extends LockQueries implements RLock {
  /** This lock and kind in the client's hold records: `${kind}\0${lock key}`. */
  readonly #lockId: string;
  readonly #kind: HoldKind;

  protected constructor(core: LockCore, name: unknown, kind: HoldKind) {
    super(core, name, kind);
    this.#kind = kind;
    this.#lockId = lockIdOf(kind, this.keys.lock);
  }

  /**
   * Acquires for `owner`: `waitMs` 0 is one attempt, undefined waits without limit.
   * Resolves with the successful attempt, or false.
   */
  protected abstract acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false>;

  /**
   * Releases one hold of `owner`; `reExpireMs` (0: keep) is the TTL the lock keeps at least when
   * holds remain. Its request (see request) makes a resend harmless: `held` keeps the request of a
   * release sent again, else it is used once; a final release answers a resend for `recordMs`.
   * Resolves with the remaining hold count or ScriptStatus.NotHeld.
   */
  protected abstract releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<HoldsLeft>;

  /** Sends a changing call for `owner` (undefined: forceUnlock) with a request of the client's window on the lock's key. */
  protected request<T>(owner: string | undefined, send: (request: CallRequest) => Promise<T>, held?: HeldRequest): Promise<T> {
    return this.core.scripts.requests.send(this.keys.lock, owner, send, held);
  }

  /** Sends an acquisition attempt (lease `ttlMs`; `took`: it acquired): a lost answer's hold is given back (lost-attempt.ts). */
  protected requestAttempt<T>(owner: string, ttlMs: number, send: (request: CallRequest) => Promise<T>, took: (reply: T) => boolean, missed?: () => void): Promise<T> {
    return sendAttempt(new BaseLock.#Attempt(this, owner, send, took, missed), ttlMs);
  }

  /** One acquisition attempt of `owner` (lost-attempt.ts): one object per attempt, no closures. */
  static readonly #Attempt = class OwnerAttempt<T> implements AttemptCalls<T> {
    constructor(
      readonly lock: BaseLock,
      readonly owner: string,
      readonly sendRequest: (request: CallRequest) => Promise<T>,
      readonly took: (reply: T) => boolean,
      readonly whenMissed: (() => void) | undefined,
    ) {}

    send(held: HeldRequest): Promise<T> {
      return this.lock.request(this.owner, this.sendRequest, held);
    }

    undo(): void {
      this.lock.abandon(this.owner);
    }

    missed(): void {
      this.whenMissed?.();
    }

    assertOpen(): void {
      this.lock.core.assertOpen();
    }
  };

  /** How the watchdog renews `owner`'s hold of this lock. */
  protected renewTarget(owner: string): RenewTarget {
    return { name: this.name, script: KINDS[this.#kind].renew, keys: [this.keys.lock], holder: owner };
  }

  /** The lease of a hold in Redis, ms: the watchdog's timeout in watchdog mode. */
  protected ttlFor(leaseMs: number): number {
    return leaseMs === WATCHDOG_LEASE ? this.core.watchdogTimeoutMs : leaseMs;
  }

  async lock(leaseTime?: number, options?: SignalOptions): Promise<void> {
    const { leaseMs, signal, maxHoldMs } = checkLockArgs(leaseTime, options, this.name);
    await this.take(undefined, leaseMs, signal, maxHoldMs);
  }

  tryLock(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<boolean>;
  tryLock(options: LockWaitOptions): Promise<boolean>;
  tryLock(waitOrOptions?: number | LockWaitOptions, leaseTime?: number, options?: SignalOptions): Promise<boolean> {
    let taking: Promise<Acquired | false>;
    try {
      const { waitMs, leaseMs, signal, maxHoldMs } = checkTryLockArgs(waitOrOptions, leaseTime, options, this.name);
      taking = this.take(waitMs ?? 0, leaseMs, signal, maxHoldMs);
    } catch (error) {
      return Promise.reject(error);
    }
    return taking.then(isAcquired);
  }

  unlock(): Promise<void> {
    let opening: Promise<void> | undefined;
    try {
      opening = this.opening();
      if (!opening) return this.#unlockNow();
    } catch (error) {
      return Promise.reject(error);
    }
    return opening.then(() => this.#unlockNow());
  }

  #unlockNow(): Promise<void> {
    const context = currentContext();
    if (context) return this.#release(ownerId(this.core.clientId, context.id)).then(nothing);
    // Taken off the list now, not when Redis answers: concurrent unlocks must not pick the same hold.
    const owner = this.core.holds.unscoped.take(this.#lockId);
    if (owner === undefined) return Promise.reject(this.#notHeld());
    return this.#release(owner).then(nothing, (error: unknown) => {
      // Still held (the call failed): a retried unlock must find it.
      if (!(error instanceof LockNotHeldError) && this.core.holds.get(this.#lockId, owner)) {
        this.core.holds.unscoped.remember(this.#lockId, owner);
      }
      throw error;
    });
  }

  async forceUnlock(): Promise<boolean> {
    await this.open();
    return this.request(undefined, (request) => this.core.scripts.lock.forceUnlock(this.keys, this.core.publish, request));
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  async getHoldCount(): Promise<number> {
    const owner = this.currentOwner();
    return owner === undefined ? 0 : this.holdCountOf(owner);
  }

  async acquire(options?: LockWaitOptions): Promise<Lease> {
    const { waitMs, leaseMs, signal, maxHoldMs } = checkWaitOptions(options, this.name);
    const opening = this.opening();
    if (opening) await opening;
    const owner = this.#acquiringOwner();
    const acquired = await this.#acquire(owner, waitMs, leaseMs, signal, true, maxHoldMs);
    if (acquired === false) {
      throw new LockAcquireTimeoutError(`timed out after ${waitMs} ms waiting for lock "${this.name}"`, waitMs ?? 0, {
        lockName: this.name,
      });
    }
    return this.#lease(owner, acquired);
  }

  async withLock<T>(fn: (lease: Lease) => T | Promise<T>, options?: LockWaitOptions): Promise<T> {
    const body = checkFunction<(lease: Lease) => T | Promise<T>>(fn, 'fn');
    checkWaitOptions(options, this.name);
    return runWithLease(() => this.acquire(options), body, (error) => this.core.events.emit('error', error));
  }

  /**
   * Releases one hold of exactly `owner` (MultiLock and RedLock); resolves with the holds left.
   * A release of its own unless `ticket` ties it to an earlier try: an earlier release of the
   * owner that failed, and is retried in the background, must not stand in for this one.
   */
  protected async releaseOwner(owner: string, ticket: ReleaseTicket = {}): Promise<number> {
    await this.open();
    return this.#release(owner, ticket);
  }

  /** Acquires for the current owner (the context's, or a fresh one); false when the wait ran out. */
  protected take(waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined, maxHoldMs?: number): Promise<Acquired | false> {
    let opening: Promise<void> | undefined;
    try {
      opening = this.opening();
    } catch (error) {
      return Promise.reject(error);
    }
    if (opening) return opening.then(() => this.#acquire(this.#acquiringOwner(), waitMs, leaseMs, signal, true, maxHoldMs));
    return this.#acquire(this.#acquiringOwner(), waitMs, leaseMs, signal, true, maxHoldMs);
  }

  /** Releases one hold of `owner` quietly: for acquisitions nobody waits for any more. */
  protected abandon(owner: string): void {
    this.releaseFor(owner, 0, undefined, 1_000).catch((error: unknown) => this.core.events.emit('error', error));
  }

  /** The owner the queries concern; undefined outside a context with no unscoped hold, or after this context's hand-off. */
  protected currentOwner(): string | undefined {
    return this.core.holds.currentOwner(this.#lockId, this.keys.lock);
  }

  /** Acquires for `owner`; `listed`: an unscoped hold goes on the list `unlock()` takes from. */
  #acquire(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined, listed = true, maxHoldMs?: number): Promise<Acquired | false> {
    return acquireInTime(new BaseLock.#Call(this, owner, waitMs, leaseMs, signal, listed && !currentContext(), maxHoldMs ?? this.core.maxHoldTimeMs));
  }

  /** One acquisition call of a lock (acquire-in-time.ts): one object per call, no closures. */
  static readonly #Call = class LockAcquireCall implements AcquireCall {
    readonly core: LockCore;
    readonly name: string;
    readonly lockId: string;
    readonly lockKey: string;
    readonly ttlMs: number;

    constructor(
      readonly lock: BaseLock,
      readonly owner: string,
      readonly waitMs: number | undefined,
      readonly leaseMs: number,
      readonly signal: AbortSignal | undefined,
      readonly unscoped: boolean,
      readonly maxHoldMs: number | undefined,
    ) {
      this.core = lock.core;
      this.name = lock.name;
      this.lockId = lock.#lockId;
      this.lockKey = lock.keys.lock;
      this.ttlMs = lock.ttlFor(leaseMs);
    }

    attempt(left: number | undefined): Promise<Acquired | false> {
      return this.lock.acquireFor(this.owner, left, this.leaseMs, this.signal);
    }

    holdBefore(): Hold | undefined {
      return this.unscoped ? undefined : this.lock.holdOf(this.owner); // an unscoped call's owner is new: no hold yet
    }

    abandon(): void {
      this.lock.abandon(this.owner);
    }

    rollBack(): Promise<HoldsLeft> {
      return this.lock.releaseFor(this.owner, 0, undefined, 1_000);
    }

    confirmed(acquired: Acquired): void {
      this.lock.trackHold(this.owner, acquired.sentAt, this.leaseMs, { unscoped: this.unscoped, maxHoldMs: this.maxHoldMs });
    }
  };

  /**
   * Counts a confirmed acquisition of `owner` (sent at `sentAt`) in the client's hold records: the
   * holder's clock, and watchdog renewal in watchdog mode. A RedLock's node holds are `quiet`.
   */
  protected trackHold(owner: string, sentAt: number, leaseMs: number, how: { unscoped?: boolean; quiet?: boolean; maxRenewals?: number; maxHoldMs?: number }): Hold {
    const { unscoped = false, quiet, maxRenewals, maxHoldMs } = how;
    const ttlMs = this.ttlFor(leaseMs);
    const acquisition = { kind: this.#kind, lockId: this.#lockId, owner, target: this.renewTarget(owner), unscoped, quiet, maxRenewals, letGo: this.#letGo(owner), sentAt, ttlMs, watchdog: leaseMs === WATCHDOG_LEASE };
    return recordHold(this.core, acquisition, maxHoldMs);
  }

  /** Releases `count` holds of `owner` in the background, nobody waiting (see Hold.letGo). */
  #letGo(owner: string): (count: number) => void {
    return (count) => {
      for (let i = 0; i < count; i += 1) this.releaseFor(owner, 0, undefined, 1_000).catch(() => undefined);
    };
  }

  /** This lock's calls by exact owner: MultiLock, RedLock, hand-off and adopt (see OwnerCalls). */
  [OWNER_CALLS](): OwnerCalls {
    return {
      core: this.core,
      name: this.name,
      kind: this.#kind,
      lockId: this.#lockId,
      keys: this.keys,
      holdOf: (owner) => this.holdOf(owner),
      target: (owner) => this.renewTarget(owner),
      letGo: (owner) => this.#letGo(owner),
      // The adopted Lease stands for the whole hold: its release() releases every hold count.
      lease: (owner, token) => this.#lease(owner, { token }, releaseWhole((ticket) => this.#release(owner, ticket))),
      newOwner: () => this.#acquiringOwner(),
      acquire: async (owner, waitMs, leaseMs, signal) => {
        await this.open();
        return (await this.#acquire(owner, waitMs, leaseMs, signal, false)) !== false;
      },
      release: (owner, ticket) => this.releaseOwner(owner, ticket),
      sendRelease: async (owner, reExpireMs, recordMs) => {
        await this.open();
        return this.releaseFor(owner, reExpireMs, undefined, recordMs);
      },
      holdCount: (owner) => this.holdCountOf(owner),
      track: (owner, sentAt, leaseMs, maxRenewals) => this.trackHold(owner, sentAt, leaseMs, { quiet: true, maxRenewals }),
    };
  }

  /** The client's record of `owner`'s holds of this lock, if it holds any. */
  protected holdOf(owner: string): Hold | undefined {
    const hold = this.core.holds.get(this.#lockId, owner);
    return hold && this.core.holds.isCurrent(hold) ? hold : undefined;
  }

  /** Releases one hold of `owner` (see releaseHold); `ticket` ties a Lease's retries together. */
  #release(owner: string, ticket?: ReleaseTicket): Promise<number> {
    const hold = this.core.holds.get(this.#lockId, owner);
    // Nothing held here: never taken, released, or its lease ran out; a Lease's release that got
    // through before is answered as it was.
    if (!hold || !this.core.holds.isCurrent(hold)) return answeredBefore(this.name, hold, ticket) ?? Promise.reject(this.#notHeld());
    const send: SendRelease = (holder, reExpireMs, pending, recordMs) => this.releaseFor(holder, reExpireMs, pending, recordMs);
    try {
      return isReleaseTraced() ? traceRelease(this.core, this.name, owner, this.#lockId, () => releaseHold(this.core, this.name, hold, send, ticket)) : releaseHold(this.core, this.name, hold, send, ticket);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #lease(owner: string, acquired: { token?: number | undefined }, release = (ticket: ReleaseTicket) => this.#release(owner, ticket)): Lease {
    const hold = this.holdOf(owner);
    // A kind with no handle (an election's) moves only through its own API.
    const kind = this.#kind;
    const moves = KINDS[kind].handle === undefined ? undefined : movesOf(this.core, hold, { kind: kind as LeaseHandleKind, name: this.name, token: acquired.token });
    return leaseOfHold(this.name, owner, hold, acquired.token, release, moves);
  }

  /** The owner acquiring now: the context's, or a fresh one outside any context. */
  #acquiringOwner(): string {
    return ownerId(this.core.clientId, currentContext()?.id ?? newContextId());
  }

  #notHeld(): LockNotHeldError {
    return new LockNotHeldError(`lock "${this.name}" is not held by the current owner`, { lockName: this.name });
  }
}
