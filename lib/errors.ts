/**
 * Every error rlock raises extends {@link LockError}. Each has a literal `name`, a stable
 * `code`, the lock's name where one is involved, and the underlying `cause` where there is one.
 */

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

/** Base class of every error rlock raises. Test with {@link isLockError} across module copies. */
export class LockError extends Error {
  override readonly name: string = 'LockError';
  /** A stable, machine-readable code. */
  readonly code: string = 'LOCK_ERROR';
  /** The lock the error is about, if any. */
  readonly lockName: string | undefined;

  constructor(message: string, options: LockErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.lockName = options.lockName;
    Object.defineProperty(this, LOCK_ERROR_BRAND, { value: true });
  }
}

/** `unlock()` (or a release) by an owner that holds no hold on the lock. */
export class LockNotHeldError extends LockError {
  override readonly name = 'LockNotHeldError' as const;
  override readonly code = 'LOCK_NOT_HELD' as const;
}

/** `withLock` / `acquire` ran out of `waitTime` before the lock was free. */
export class LockAcquireTimeoutError extends LockError {
  override readonly name = 'LockAcquireTimeoutError' as const;
  override readonly code = 'LOCK_ACQUIRE_TIMEOUT' as const;
  /** The wait budget that ran out, ms. */
  readonly waitTimeMs: number;

  constructor(message: string, waitTimeMs: number, options: LockErrorOptions = {}) {
    super(message, options);
    this.waitTimeMs = waitTimeMs;
  }
}

/** Why a held lock was lost. */
export type LockLostReason =
  /** The lock key was deleted (force-unlocked, evicted, flushed) while held. */
  | 'deleted'
  /** Another owner holds the lock now: the lease ran out and someone else took it. */
  | 'taken'
  /** Renewal kept failing (connection down) until the lease must have run out. */
  | 'expired';

/** A held lock was lost: `Lease.signal` aborts with this, and `lost` is emitted. */
export class LockLostError extends LockError {
  override readonly name = 'LockLostError' as const;
  override readonly code = 'LOCK_LOST' as const;
  readonly reason: LockLostReason;

  constructor(message: string, reason: LockLostReason, options: LockErrorOptions = {}) {
    super(message, options);
    this.reason = reason;
  }
}

/**
 * `syncReplicas`: fewer replicas confirmed a write than required. An acquisition that gets this
 * was rolled back (the lock is not held); a renewal that gets it is reported as an `error` event.
 */
export class LockReplicationError extends LockError {
  override readonly name = 'LockReplicationError' as const;
  override readonly code = 'LOCK_NOT_REPLICATED' as const;
  /** Replicas that confirmed. */
  readonly acks: number;
  /** Replicas required. */
  readonly replicas: number;

  constructor(message: string, acks: number, replicas: number, options: LockErrorOptions = {}) {
    super(message, options);
    this.acks = acks;
    this.replicas = replicas;
  }
}

/** A bad argument, rejected before anything is sent to Redis. */
export class InvalidArgumentError extends LockError {
  override readonly name = 'InvalidArgumentError' as const;
  override readonly code = 'INVALID_ARGUMENT' as const;
}

/**
 * The write lock of a read-write lock was asked for by an owner that holds only its read lock.
 * Waiting could never succeed (the owner would wait for itself), so the call fails at once,
 * whatever its wait budget. Release the read holds first, or take the write lock first (a
 * writer may also take the read lock).
 */
export class LockUpgradeError extends LockError {
  override readonly name = 'LockUpgradeError' as const;
  override readonly code = 'LOCK_UPGRADE' as const;
}

/** The call was made on, or was still waiting in, a client that has been closed. */
export class LockClientClosedError extends LockError {
  override readonly name = 'LockClientClosedError' as const;
  override readonly code = 'CLIENT_CLOSED' as const;
}

/** True for any rlock error, also one thrown by another loaded copy of rlock (ESM next to CJS). */
export function isLockError(value: unknown): value is LockError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[LOCK_ERROR_BRAND] === true;
}

/** The small negative status codes the Lua scripts return (mirrored in their headers). */
export const ScriptStatus = {
  /** The owner holds no hold on the lock. */
  NotHeld: -1,
  /** The owner asked for a write lock while holding only read holds of it. */
  UpgradeRefused: -3,
} as const;
