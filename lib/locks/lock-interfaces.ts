import type { LockHolder, QueuedWaiter } from '../inspect/types.js';
import type { Lease } from '../lease/lease.js';

/** Options of a waiting acquisition. All durations are ms. */
export interface LockWaitOptions {
  /** How long to wait for the lock; omitted: `tryLock` makes one attempt, the others wait without limit. */
  waitTime?: number;
  /** Lease, ms (at least 50); omitted or -1: watchdog mode (renewed while held, freed within `watchdogTimeout` if the holder dies). */
  leaseTime?: number;
  /** Aborts the wait; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Watchdog mode: renew the hold for at most this long, ms; then it is let go and `lost`
   * ('max-hold-time') is emitted, its Leases abort. Omitted: the client's `maxHoldTime`.
   */
  maxHoldTime?: number;
}

/** Options of `lock()` and of `tryLock(waitTime, leaseTime, options)`. */
export interface SignalOptions {
  /** Aborts the wait; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** As {@link LockWaitOptions.maxHoldTime}. */
  maxHoldTime?: number;
}

/** The lock interface every rlock lock type implements (Redisson's RLock). */
export interface RLock {
  /** The lock's name. */
  readonly name: string;
  /** Acquires, waiting without limit. `leaseTime` omitted or -1: watchdog mode. */
  lock(leaseTime?: number, options?: SignalOptions): Promise<void>;
  /**
   * Acquires if possible within `waitTime` ms (omitted or 0: one attempt); resolves false when
   * the wait ran out.
   */
  tryLock(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<boolean>;
  /** `tryLock` with its arguments as options: `tryLock({ waitTime, leaseTime, signal })`. */
  tryLock(options: LockWaitOptions): Promise<boolean>;
  /** Releases one hold of the current owner. @throws LockNotHeldError if it holds none. */
  unlock(): Promise<void>;
  /** Deletes the lock whoever holds it; true if there was one. */
  forceUnlock(): Promise<boolean>;
  /** True when anyone holds the lock. */
  isLocked(): Promise<boolean>;
  /** True when the current owner (the context's, or this client's unscoped holds) holds the lock. */
  isHeldByCurrentOwner(): Promise<boolean>;
  /** The current owner's hold count, 0 if none. */
  getHoldCount(): Promise<number>;
  /** The lock's remaining TTL in ms; -2 when not locked, -1 when it has no TTL. */
  remainTimeToLive(): Promise<number>;
  /**
   * Who holds the lock now, whoever they are: one entry per owner with its hold count and the
   * ms left of its lease (readers each, or the writer; a fenced lock adds its token); empty when
   * free. Read-only, one round trip.
   */
  getHolders(): Promise<LockHolder[]>;
  /**
   * Acquires, runs `fn(lease)` in the lock's context (nested calls re-enter), releases in `finally`.
   * @throws LockAcquireTimeoutError when `waitTime` runs out.
   */
  withLock<T>(fn: (lease: Lease) => T | Promise<T>, options?: LockWaitOptions): Promise<T>;
  /** Acquires and returns a {@link Lease}. @throws LockAcquireTimeoutError when `waitTime` runs out. */
  acquire(options?: LockWaitOptions): Promise<Lease>;
}

/**
 * A read-write lock: many readers or one writer (Redisson's RReadWriteLock). Both sides are
 * reentrant per owner; the writer may also take the read lock, and keeps reading after its write
 * unlock (downgrade). An owner that holds only the read lock and asks for the write lock gets a
 * LockUpgradeError at once.
 */
export interface RReadWriteLock {
  /** The lock's name. */
  readonly name: string;
  /** The shared side: held by any number of owners at once while no other owner writes. */
  readLock(): RLock;
  /** The exclusive side: held by one owner while nobody else reads or writes. */
  writeLock(): RLock;
}

/** A fair lock: an {@link RLock} whose waiting calls get it in the order they asked. */
export interface RFairLock extends RLock {
  /** The waiting calls, head first, with how long each has waited. Read-only, one round trip. */
  getQueue(): Promise<QueuedWaiter[]>;
}

/** The Lease of a fenced lock: its `token` is always set. */
export type FencedLease = Lease & {
  /** The fencing token of the hold. */
  readonly token: number;
};

/**
 * A reentrant lock that hands out fencing tokens: every acquisition from unlocked gets a token
 * greater than every token given before for this name (also after the lock expired or was
 * force-unlocked); a re-entry gets the holder's token. Pass the token to the resource you guard,
 * and have it refuse tokens lower than the highest it has seen.
 */
export interface RFencedLock extends RLock {
  /** Acquires and returns a {@link FencedLease}, whose `token` is set. @throws LockAcquireTimeoutError when `waitTime` runs out. */
  acquire(options?: LockWaitOptions): Promise<FencedLease>;
  /** Like {@link RLock.withLock}; `fn` gets a {@link FencedLease}, whose `token` is set. */
  withLock<T>(fn: (lease: FencedLease) => T | Promise<T>, options?: LockWaitOptions): Promise<T>;
  /** Acquires, waiting without limit, and resolves with the token. `leaseTime` omitted or -1: watchdog mode. */
  lockAndGetToken(leaseTime?: number, options?: SignalOptions): Promise<number>;
  /** Like tryLock; resolves with the token, or null when the wait ran out. */
  tryLockAndGetToken(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<number | null>;
  /** `tryLockAndGetToken` with its arguments as options. */
  tryLockAndGetToken(options: LockWaitOptions): Promise<number | null>;
  /** The token of the hold the lock is under now, whoever holds it; null when it is not locked. */
  getToken(): Promise<number | null>;
}
