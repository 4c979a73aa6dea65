import { currentContext, newContextId, ownerId } from '../context.js';
import type { LockCore } from '../core.js';
import { LockAcquireTimeoutError, LockNotHeldError, toLockError, type LockOperation } from '../errors.js';
import { holdDrift, type Hold, type RenewTarget } from '../holding/holds.js';
import { lockKeys, type LockKeys } from '../keys.js';
import { exclusiveHolders, inspectKeys } from '../inspect/inspect.js';
import type { LockHolder } from '../inspect/types.js';
import { Lease } from '../holding/lease.js';
import { checkFunction, checkLockArgs, checkLockName, checkTryLockArgs, checkWaitOptions, WATCHDOG_LEASE } from '../validate.js';
import type { Acquired } from '../waiting/wait.js';
import { leaseOfHold, releaseHold, type ReleaseTicket } from '../holding/hold-release.js';
import { LockMember } from './lock-member.js';
import { confirmReplicas } from '../holding/replica-ack.js';
import { AcquireTrack } from '../telemetry/channels.js';
import { assertNotHandedOff, movesOf, releaseWhole } from '../holding/lease-moves.js';
import { capHold } from '../holding/max-hold.js';
import type { LeaseHandleKind } from '../holding/lease-handle.js';
import { HOLD_ACCESS, type HoldAccess } from '../holding/hold-access.js';
import { traceRelease } from '../telemetry/tracing.js';
import { newRequestId } from '../holding/request-id.js';
import { runWithLease } from '../holding/with-lease.js';
import type { LockWaitOptions, RLock, SignalOptions } from './rlock.js';

/**
 * Brands every BaseLock under a registry symbol, so a MultiLock of one loaded copy of rlock (ESM
 * or CJS) takes the locks of the other. Versioned: MultiLock relies on BaseLock's internals.
 */
export const BASE_LOCK = Symbol.for('rlock.baseLock.v2');

/**
 * What every lock kind shares: owner resolution (contexts and unscoped holds), argument
 * checks, watchdog and event bookkeeping, leases, withLock/acquire and the hash queries.
 * A kind supplies how to acquire (with its waiting strategy) and how to release.
 */
export abstract class BaseLock implements RLock {
  readonly name: string;
  protected readonly core: LockCore;
  protected readonly keys: LockKeys;
  /** This lock and kind in the client's hold records: `${kind}\0${lock key}`. */
  readonly #lockId: string;
  readonly #kind: LeaseHandleKind | 'election';

  protected constructor(core: LockCore, name: unknown, kind: LeaseHandleKind | 'election') {
    this.name = checkLockName(name);
    this.core = core;
    this.keys = lockKeys(core.keyPrefix, this.name);
    this.#kind = kind;
    this.#lockId = `${kind}\u0000${this.keys.lock}`;
  }

  /**
   * Acquires for `owner`: `waitMs` 0 is one attempt, undefined waits without limit.
   * Resolves with the successful attempt, or false.
   */
  protected abstract acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false>;

  /**
   * Releases one hold of `owner`; `reExpireMs` (0: keep) is the TTL the lock keeps at least when
   * holds remain. `requestId` makes a resend harmless; a final release is remembered `recordMs`
   * for that. Resolves with the remaining hold count or ScriptStatus.NotHeld.
   */
  protected abstract releaseFor(owner: string, reExpireMs: number, requestId: string, recordMs: number): Promise<number>;

  /** How the watchdog renews `owner`'s hold of this lock. */
  protected renewTarget(owner: string): RenewTarget {
    return { name: this.name, script: 'lock', keys: [this.keys.lock], holder: owner };
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
  async tryLock(
    waitOrOptions?: number | LockWaitOptions,
    leaseTime?: number,
    options?: SignalOptions,
  ): Promise<boolean> {
    const { waitMs, leaseMs, signal, maxHoldMs } = checkTryLockArgs(waitOrOptions, leaseTime, options, this.name);
    return (await this.take(waitMs ?? 0, leaseMs, signal, maxHoldMs)) !== false;
  }

  async unlock(): Promise<void> {
    const opening = this.opening();
    if (opening) await opening;
    const context = currentContext();
    if (context) {
      await this.#release(ownerId(this.core.clientId, context.id));
      return;
    }
    // Taken off the list now, not when Redis answers: concurrent unlocks must not pick the same hold.
    const owner = this.core.holds.takeUnscoped(this.#lockId);
    if (owner === undefined) throw this.#notHeld();
    try {
      await this.#release(owner);
    } catch (error) {
      // Still held (the call failed): a retried unlock must find it.
      if (!(error instanceof LockNotHeldError) && this.core.holds.get(this.#lockId, owner)) {
        this.core.holds.rememberUnscoped(this.#lockId, owner);
      }
      throw error;
    }
  }

  async forceUnlock(): Promise<boolean> {
    await this.open();
    return this.core.scripts.lock.forceUnlock(this.keys, this.core.publish, this.forceRequestId());
  }

  async isLocked(): Promise<boolean> {
    await this.open();
    return Number(await this.query(this.core.redis.command(['exists', this.keys.lock], this.keys.lock))) === 1;
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  async getHoldCount(): Promise<number> {
    const owner = this.currentOwner();
    return owner === undefined ? 0 : this.holdCountOf(owner);
  }

  async remainTimeToLive(): Promise<number> {
    await this.open();
    return Number(await this.query(this.core.redis.command(['pttl', this.keys.lock], this.keys.lock)));
  }

  async getHolders(): Promise<LockHolder[]> {
    await this.open();
    return exclusiveHolders(this.core.redis, inspectKeys(this.core.keyPrefix, this.name));
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

  /** For MultiLock (of this or another loaded copy of rlock): this lock as a member, with exact-owner calls. */
  [BASE_LOCK](): LockMember {
    return new LockMember({
      lock: this,
      core: this.core,
      keys: this.keys,
      lockId: this.#lockId,
      newOwner: () => this.#acquiringOwner(),
      acquireAs: async (owner, waitMs, leaseMs, signal) => {
        await this.open();
        return (await this.#acquire(owner, waitMs, leaseMs, signal, false)) !== false;
      },
      releaseAs: (owner) => this.releaseOwner(owner),
      holdOf: (owner) => this.holdOf(owner),
      holdCountOf: (owner) => this.holdCountOf(owner),
    });
  }

  /** `owner`'s hold count of this lock, 0 if none. */
  async holdCountOf(owner: string): Promise<number> {
    await this.open();
    return Number((await this.query(this.core.redis.command(['hget', this.keys.lock, owner], this.keys.lock))) ?? 0);
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
  protected async take(waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined, maxHoldMs?: number): Promise<Acquired | false> {
    const opening = this.opening();
    if (opening) await opening;
    return this.#acquire(this.#acquiringOwner(), waitMs, leaseMs, signal, true, maxHoldMs);
  }

  /** Releases one hold of `owner` quietly: for acquisitions nobody waits for any more. */
  protected abandon(owner: string): void {
    this.releaseFor(owner, 0, newRequestId(), 1_000).catch((error: unknown) => this.core.events.emit('error', error));
  }

  /** A forceUnlock's request id: unique across clients, since its record is the lock's. */
  protected forceRequestId(): string {
    return `${this.core.clientId}:${newRequestId()}`;
  }

  /** A read-only call's answer; a failure from Redis as a LockRedisError. */
  protected async query<T>(call: Promise<T>, operation: LockOperation = 'query'): Promise<T> {
    try {
      return await call;
    } catch (error) {
      throw toLockError(error, operation, this.name);
    }
  }

  /** The owner whose holds unlock and the queries concern; undefined outside a context with no unscoped hold. */
  protected currentOwner(): string | undefined {
    const context = currentContext();
    return context ? ownerId(this.core.clientId, context.id) : this.core.holds.latestUnscoped(this.#lockId);
  }

  /** Acquires for `owner`; `listed`: an unscoped hold goes on the list `unlock()` takes from. */
  #acquire(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined, listed = true, maxHoldMs?: number): Promise<Acquired | false> {
    signal?.throwIfAborted();
    assertNotHandedOff(this.#lockId, this.name);
    const track = new AcquireTrack(this.core.clientId, this.#lockId, this.name, owner, { server: this.core.redis.address, signal });
    return track.run(() => this.#acquireTracked(track, owner, waitMs, leaseMs, signal, listed, maxHoldMs));
  }

  async #acquireTracked(track: AcquireTrack, owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined, listed: boolean, maxHoldMs: number | undefined): Promise<Acquired | false> {
    const deadline = waitMs === undefined ? Infinity : performance.now() + waitMs;
    const ttlMs = this.ttlFor(leaseMs);
    let acquired: Acquired | false;
    for (;;) {
      const left = waitMs === undefined ? undefined : Math.max(0, Math.ceil(deadline - performance.now()));
      const reentered = this.holdOf(owner);
      try {
        acquired = await this.acquireFor(owner, left, leaseMs, signal);
      } catch (error) {
        throw track.failed(error);
      }
      if (acquired === false) return track.gaveUp();
      track.attempted(acquired);
      // An answer that came after the lease it granted ran out (by the holder's clock) is no
      // acquisition: someone else may hold the lock already. Let go, and ask again in time.
      // A re-entry of a hold the clock ended while the call was out: the let-go of that hold,
      // sent for the same owner, may have taken this acquisition away in Redis. Same remedy.
      if (performance.now() < acquired.sentAt + ttlMs - holdDrift(ttlMs) && !reentered?.letGoSent) break;
      this.abandon(owner);
      if (left === 0 || performance.now() >= deadline) return track.gaveUp();
    }
    if (this.core.syncReplicas) {
      const rollBack = (): Promise<number> => this.releaseFor(owner, 0, newRequestId(), 1_000);
      await confirmReplicas(this.core, this.name, this.keys.lock, rollBack, () => this.abandon(owner));
    }
    // Synchronously with the reply: the holder's clock (and renewal) start before user code runs.
    this.trackHold(owner, acquired.sentAt, leaseMs, { unscoped: listed && !currentContext(), maxHoldMs: maxHoldMs ?? this.core.maxHoldTimeMs });
    this.core.events.emit('acquired', track.acquired());
    return acquired;
  }

  /**
   * Counts a confirmed acquisition of `owner` (sent at `sentAt`) in the client's hold records: the
   * holder's clock, and watchdog renewal in watchdog mode. A RedLock's node holds are `quiet`.
   */
  protected trackHold(owner: string, sentAt: number, leaseMs: number, how: { unscoped?: boolean; quiet?: boolean; maxRenewals?: number; maxHoldMs?: number }): Hold {
    const watchdog = leaseMs === WATCHDOG_LEASE;
    const letGo = this.#letGo(owner);
    const hold = this.core.holds.acquired({
      lockId: this.#lockId,
      owner,
      target: this.renewTarget(owner),
      unscoped: how.unscoped ?? false,
      quiet: how.quiet,
      maxRenewals: how.maxRenewals,
      letGo,
      sentAt,
      ttlMs: this.ttlFor(leaseMs),
      watchdog,
    });
    if (watchdog) this.core.watchdog.kick();
    if (!how.quiet) capHold(this.core, hold, how.maxHoldMs, letGo);
    return hold;
  }

  /** Releases `count` holds of `owner` in the background, nobody waiting (see Hold.letGo). */
  #letGo(owner: string): (count: number) => void {
    return (count) => {
      for (let i = 0; i < count; i += 1) this.releaseFor(owner, 0, newRequestId(), 1_000).catch(() => undefined);
    };
  }

  /** For `lease.handOff()` and `locks.adopt()` (lib/holding/): this lock's holds by exact owner. */
  [HOLD_ACCESS](): HoldAccess {
    return {
      core: this.core,
      name: this.name,
      lockId: this.#lockId,
      target: (owner) => this.renewTarget(owner),
      letGo: (owner) => this.#letGo(owner),
      // The adopted Lease stands for the whole hold: its release() releases every hold count.
      lease: (owner, token) => this.#lease(owner, { token }, releaseWhole((ticket) => this.#release(owner, ticket))),
    };
  }

  /** The client's record of `owner`'s holds of this lock, if it holds any. */
  protected holdOf(owner: string): Hold | undefined {
    const hold = this.core.holds.get(this.#lockId, owner);
    return hold && this.core.holds.isCurrent(hold) ? hold : undefined;
  }

  /** Throws once the client is closed; waits until the client knows its topology. */
  protected async open(): Promise<void> {
    await this.opening();
  }

  /**
   * Throws once the client is closed; what to wait for until the client knows its topology, or
   * undefined when it does (the hot paths then await nothing).
   */
  protected opening(): Promise<void> | undefined {
    this.core.assertOpen();
    return this.core.ready();
  }

  /** Releases one hold of `owner` (see releaseHold); `ticket` ties a Lease's retries together. */
  #release(owner: string, ticket?: ReleaseTicket): Promise<number> {
    const hold = this.core.holds.get(this.#lockId, owner);
    // Nothing held here: never taken, released, or its lease ran out.
    if (!hold || !this.core.holds.isCurrent(hold)) return Promise.reject(this.#notHeld());
    return traceRelease(this.core, this.name, owner, this.#lockId, () => releaseHold(this.core, this.name, hold, (...args) => this.releaseFor(...args), ticket));
  }

  #lease(owner: string, acquired: { token?: number | undefined }, release = (ticket: ReleaseTicket) => this.#release(owner, ticket)): Lease {
    const hold = this.holdOf(owner);
    // An election's hold moves only through its Leadership, never by a handle.
    const kind = this.#kind;
    const moves = kind === 'election' ? undefined : movesOf(this.core, hold, { kind, name: this.name, token: acquired.token });
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
