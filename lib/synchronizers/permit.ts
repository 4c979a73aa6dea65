import { Releasable } from '../releasable.js';

/** What a Permit is built from. */
export interface PermitInit {
  readonly id: string;
  readonly name: string;
  readonly permits: number;
  readonly signal: AbortSignal;
  readonly release: () => Promise<void>;
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
  /** @internal Permits are made by the semaphore (`acquire`, `tryAcquire`, `withPermit`). */
  constructor(init: PermitInit) {
    super(init.release);
    this.id = init.id;
    this.name = init.name;
    this.permits = init.permits;
    this.signal = init.signal;
  }
}
