import type { HandOffOptions } from '../lease/lease-moves.js';
import type { LeaseHandle } from '../lease/lease-handle.js';
import type { LeaseMovesInit } from '../lease/lease.js';
import { Releasable } from '../lease/releasable.js';
import { checkHandOffOptions } from '../validate.js';

/** What a Permit is built from. */
export interface PermitInit {
  readonly id: string;
  readonly name: string;
  readonly permits: number;
  readonly signal: AbortSignal;
  readonly release: () => Promise<void>;
  readonly moves: LeaseMovesInit;
}

/**
 * Permits taken from a semaphore: a lease, like a lock hold. Without `leaseTime` the client's
 * watchdog renews it; `signal` aborts with a LockLostError as soon as the holder can no longer
 * be sure it holds the permits (before anyone else can take them), or with a
 * LockClientClosedError when `close()` stops renewing it. `release()` is idempotent: again, or
 * after the permits were lost, it resolves and changes nothing; after it rejected it may be
 * called again (the same request: Redis applies it once). `await using permit = await
 * sem.acquire()` releases on scope exit.
 */
export class Permit extends Releasable {
  /** Unique across clients: `<permits>:<client id>:<n>`. */
  readonly id: string;
  /** The semaphore's name. */
  readonly name: string;
  /** How many permits this holds. */
  readonly permits: number;
  /** Aborted when the permits are lost (or no longer renewed) while unreleased. */
  readonly signal: AbortSignal;
  readonly #moves: LeaseMovesInit;
  /** @internal Permits are made by the semaphore (`acquire`, `tryAcquire`, `withPermit`). */
  constructor(init: PermitInit) {
    super(init.release);
    this.id = init.id;
    this.name = init.name;
    this.permits = init.permits;
    this.signal = init.signal;
    this.#moves = init.moves;
  }

  /**
   * For permits taken with a `leaseTime`: their lease now ends `ms` from the moment Redis confirms
   * this call (never sooner than it would have). As `Lease.extend`.
   * @throws InvalidArgumentError for a bad `ms` or a watchdog-mode permit; LockLostError when gone.
   */
  extend(ms: number): Promise<void> {
    return this.#moves.extend(ms);
  }

  /**
   * Hands the permits to another process: a {@link LeaseHandle} for `locks.adopt(handle)`, which
   * resolves with a Permit there. As `Lease.handOff`: `signal` aborts with LockHandedOffError here.
   */
  handOff(options?: HandOffOptions): Promise<LeaseHandle> {
    try {
      checkHandOffOptions(options, this.name);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#moves.handOff(options);
  }
}
