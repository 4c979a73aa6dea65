// The base class every rlock error extends, its codes and options, and the brand that makes
// `instanceof` work across loaded copies of rlock.

// A registry symbol, not a module-local one: the brand must match when the ESM and the CJS
// build of rlock are both loaded in one process.
const LOCK_ERROR_BRAND = Symbol.for('rlock.LockError');

/** Options shared by every rlock error. */
export interface LockErrorOptions {
  /** The lock the error is about, if any. */
  lockName?: string;
  /** The error that caused this one. */
  cause?: unknown;
}

/** The `code` of every rlock error, one per error class. */
export type LockErrorCode =
  /** {@link LockError} itself. */
  | 'LOCK_ERROR'
  /** {@link LockNotHeldError} */
  | 'LOCK_NOT_HELD'
  /** {@link LockAcquireTimeoutError} */
  | 'LOCK_ACQUIRE_TIMEOUT'
  /** {@link LockLostError} */
  | 'LOCK_LOST'
  /** {@link LockReplicationError} */
  | 'LOCK_NOT_REPLICATED'
  /** {@link InvalidArgumentError} */
  | 'INVALID_ARGUMENT'
  /** {@link LockUpgradeError} */
  | 'LOCK_UPGRADE'
  /** {@link LockClientClosedError} */
  | 'CLIENT_CLOSED'
  /** {@link LockRedisError} */
  | 'LOCK_REDIS_ERROR'
  /** {@link RedLockQuorumError} */
  | 'REDLOCK_NO_QUORUM'
  /** {@link LockHandedOffError} */
  | 'LOCK_HANDED_OFF';

/**
 * Base class of every error rlock raises. `instanceof` works on this class and on every
 * subclass also for errors thrown by another loaded copy of rlock (the ESM and the CJS build in
 * one process): the classes check a registry brand and the class name, not the prototype alone.
 */
export class LockError extends Error {
  /** The class name: `'LockError'`, or the subclass's. */
  override readonly name: string = 'LockError';
  /** A stable, machine-readable code. */
  readonly code: LockErrorCode = 'LOCK_ERROR';
  /** The lock the error is about, if any. */
  readonly lockName: string | undefined;

  constructor(message: string, options: LockErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.lockName = options.lockName;
    Object.defineProperty(this, LOCK_ERROR_BRAND, { value: true });
  }

  /**
   * `value instanceof SomeLockError`: true for this copy's instances as usual, and for an error
   * of another copy of rlock whose class (or one of its base classes) has the same name.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    if (!isLockError(value)) return false;
    if (this === LockError) return true;
    for (let proto: unknown = Object.getPrototypeOf(value); proto !== null && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
      const ctor = (proto as { constructor?: unknown }).constructor;
      if (typeof ctor === 'function' && ctor.name === this.name) return true;
    }
    return false;
  }
}

/** True for any rlock error, also one thrown by another loaded copy of rlock (ESM next to CJS). */
export function isLockError(value: unknown): value is LockError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[LOCK_ERROR_BRAND] === true;
}
