import type { Lease } from '../lease.js';

/** Options of a waiting acquisition. All durations are ms. */
export interface LockWaitOptions {
  /** How long to wait for the lock; omitted: `tryLock` makes one attempt, the others wait without limit. */
  waitTime?: number;
  /** Lease; omitted or -1: watchdog mode (renewed while held, freed within `watchdogTimeout` if the holder dies). */
  leaseTime?: number;
  /** Aborts the wait; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface SignalOptions {
  signal?: AbortSignal;
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
  tryLock(options: LockWaitOptions): Promise<boolean>;
  /** Releases one hold of the current owner. @throws LockNotHeldError if it holds none. */
  unlock(): Promise<void>;
  /** Deletes the lock whoever holds it; true if there was one. */
  forceUnlock(): Promise<boolean>;
  isLocked(): Promise<boolean>;
  isHeldByCurrentOwner(): Promise<boolean>;
  /** The current owner's hold count, 0 if none. */
  getHoldCount(): Promise<number>;
  /** The lock's remaining TTL in ms; -2 when not locked, -1 when it has no TTL. */
  remainTimeToLive(): Promise<number>;
  /**
   * Acquires, runs `fn(lease)` in the lock's context (nested calls re-enter), releases in `finally`.
   * @throws LockAcquireTimeoutError when `waitTime` runs out.
   */
  withLock<T>(fn: (lease: Lease) => T | Promise<T>, options?: LockWaitOptions): Promise<T>;
  /** Acquires and returns a {@link Lease}. @throws LockAcquireTimeoutError when `waitTime` runs out. */
  acquire(options?: LockWaitOptions): Promise<Lease>;
}
