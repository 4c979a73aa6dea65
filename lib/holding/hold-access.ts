import type { LockCore } from '../core.js';
import type { RenewTarget } from './holds.js';

/**
 * What `locks.adopt()` needs of a lock kind (or a semaphore) to take over a hold by its exact
 * owner. Versioned registry symbol, like BASE_LOCK: it reaches into the kind's internals.
 */
export const HOLD_ACCESS = Symbol.for('rlock.holdAccess.v1');

export interface HoldAccess {
  readonly core: LockCore;
  readonly name: string;
  /** The lock and kind in the client's hold records. */
  readonly lockId: string;
  /** How the watchdog renews `owner`'s hold (its script, keys and holder). */
  target(owner: string): RenewTarget;
  /** Releases `count` holds of `owner` in the background (see Hold.letGo). */
  letGo(owner: string): (count: number) => void;
  /** The Lease (or Permit) of `owner`'s hold, once the client's hold records have it. */
  lease(owner: string, token: number | undefined): unknown;
}
