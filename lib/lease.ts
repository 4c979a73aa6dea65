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
export class Lease implements AsyncDisposable {
  /** The lock's name. */
  readonly name: string;
  /** The owner id holding this lease: `${clientId}:${contextId}`. */
  readonly owner: string;
  /** Aborted when the lock is lost while the lease is unreleased. */
  readonly signal: AbortSignal;
  /** The fencing token, for fenced locks. */
  readonly token: number | undefined;
  readonly #release: () => Promise<void>;
  #released: Promise<void> | undefined;

  /** @internal Leases are made by the locks (`acquire`, `withLock`). */
  constructor(init: LeaseInit) {
    this.name = init.name;
    this.owner = init.owner;
    this.signal = init.signal;
    this.token = init.token;
    this.#release = init.release;
  }

  /** True once `release()` was called. */
  get released(): boolean {
    return this.#released !== undefined;
  }

  /**
   * Releases this hold; later calls return the first call's promise, unless it rejected: then
   * the release is tried again (Redis applies it once).
   */
  release(): Promise<void> {
    this.#released ??= this.#release().catch((error: unknown) => {
      this.#released = undefined;
      throw error;
    });
    return this.#released;
  }

  /** `await using lease = await lock.acquire()`: releases when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
