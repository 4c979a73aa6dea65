import { Releasable } from './releasable.js';

/** What a Lease is built from. */
export interface LeaseInit {
  readonly name: string;
  readonly owner: string;
  readonly signal: AbortSignal;
  readonly token?: number;
  readonly release: () => Promise<void>;
}

/**
 * One acquisition of a lock. `signal` aborts (with a LockLostError) when the lock is lost:
 * renewal found it gone or owned by another, or the holder can no longer be sure it holds it
 * (no renewal or acquisition confirmed within the lease). `release()` is idempotent, and may be
 * called again after it rejected (the retry is the same release); `await using lease = await
 * lock.acquire()` releases on scope exit.
 */
export class Lease extends Releasable {
  /** The lock's name. */
  readonly name: string;
  /** The owner id holding this lease: `${clientId}:${contextId}`. */
  readonly owner: string;
  /** Aborted when the lock is lost while the lease is unreleased. */
  readonly signal: AbortSignal;
  /** The fencing token, for fenced locks. */
  readonly token: number | undefined;

  /** @internal Leases are made by the locks (`acquire`, `withLock`). */
  constructor(init: LeaseInit) {
    super(init.release);
    this.name = init.name;
    this.owner = init.owner;
    this.signal = init.signal;
    this.token = init.token;
  }
}
