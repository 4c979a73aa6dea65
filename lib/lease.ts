import { Releasable } from './releasable.js';

/**
 * A Lease's abort, with its AbortController made only when someone reads the signal: most leases
 * are released without anyone looking at it, and a controller is the dearest part of a lease.
 */
export class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** What a Lease is built from. */
export interface LeaseInit {
  readonly name: string;
  readonly owner: string;
  /** The signal, or the lazy abort that makes it when read. */
  readonly signal: AbortSignal | LazyAbort;
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
  /** The fencing token, for fenced locks. */
  readonly token: number | undefined;
  readonly #signal: AbortSignal | LazyAbort;

  /** @internal Leases are made by the locks (`acquire`, `withLock`). */
  constructor(init: LeaseInit) {
    super(init.release);
    this.name = init.name;
    this.owner = init.owner;
    this.#signal = init.signal;
    this.token = init.token;
  }

  /** Aborted when the lock is lost while the lease is unreleased. */
  get signal(): AbortSignal {
    return this.#signal instanceof LazyAbort ? this.#signal.signal : this.#signal;
  }
}
