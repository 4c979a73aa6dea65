import { isLockError, LockError, type LockErrorOptions } from './lock-error.js';

// The errors of single locks and synchronizers, and the status codes the scripts answer with.

/** `unlock()` (or a release) by an owner that holds no hold on the lock. */
export class LockNotHeldError extends LockError {
  /** `'LockNotHeldError'`. */
  override readonly name = 'LockNotHeldError' as const;
  override readonly code = 'LOCK_NOT_HELD' as const;
}

/** `withLock` / `acquire` ran out of `waitTime` before the lock was free. */
export class LockAcquireTimeoutError extends LockError {
  /** `'LockAcquireTimeoutError'`. */
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
  /**
   * Renewal kept failing (connection down) until the lease must have run out; or a fixed lease
   * (or a RedLock's capped renewals) ran out before release.
   */
  | 'expired'
  /** A RedLock could not renew on a majority of its nodes within its validity time. */
  | 'quorum'
  /** A watchdog-mode hold reached its `maxHoldTime`: it was let go in Redis. */
  | 'max-hold-time'
  /**
   * With `renewalThread`: the event loop was blocked for longer than `maxStall`, so the thread
   * stopped renewing and the hold was let go (told when the loop resumes).
   */
  | 'stalled';

/** A held lock was lost: `Lease.signal` aborts with this, and `lost` is emitted. */
export class LockLostError extends LockError {
  /** `'LockLostError'`. */
  override readonly name = 'LockLostError' as const;
  override readonly code = 'LOCK_LOST' as const;
  /** Why the lock was lost. */
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
  /** `'LockReplicationError'`. */
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
  /** `'InvalidArgumentError'`. */
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
  /** `'LockUpgradeError'`. */
  override readonly name = 'LockUpgradeError' as const;
  override readonly code = 'LOCK_UPGRADE' as const;
}

/**
 * The hold was handed to another process (`lease.handOff()`): this Lease's `signal` aborts with
 * it, and this process neither renews nor releases the hold any more. Whoever adopts the handle
 * (`locks.adopt(handle)`) holds it now.
 */
export class LockHandedOffError extends LockError {
  /** `'LockHandedOffError'`. */
  override readonly name = 'LockHandedOffError' as const;
  override readonly code = 'LOCK_HANDED_OFF' as const;
}

/** The call was made on, or was still waiting in, a client that has been closed. */
export class LockClientClosedError extends LockError {
  /** `'LockClientClosedError'`. */
  override readonly name = 'LockClientClosedError' as const;
  override readonly code = 'CLIENT_CLOSED' as const;
}

/** What a message names: a lock, or one of the synchronizers built the same way. */
export type ObjectKind = 'lock' | 'semaphore' | 'latch';

/** What rlock was doing when Redis or the connection failed. */
export type LockOperation = 'acquire' | 'release' | 'renew' | 'forceUnlock' | 'query' | 'extend' | 'handOff' | 'adopt';

/**
 * A failure from Redis or the connection (OOM, READONLY, CLUSTERDOWN, a closed connection,
 * ioredis' retry limit, no answer in time). `cause` is the original error.
 */
export class LockRedisError extends LockError {
  /** `'LockRedisError'`. */
  override readonly name = 'LockRedisError' as const;
  override readonly code = 'LOCK_REDIS_ERROR' as const;
  /** What rlock was doing. */
  readonly operation: LockOperation;

  constructor(message: string, operation: LockOperation, options: LockErrorOptions = {}) {
    super(message, options);
    this.operation = operation;
  }
}

/**
 * `error` as an rlock error (`kind` names what `lockName` is): an rlock error stays as it is; anything else (a reply error, a closed
 * connection, ioredis' retry limit) becomes a LockRedisError with it as `cause`.
 */
export function toLockError(error: unknown, operation: LockOperation, lockName: string | undefined, kind: ObjectKind = 'lock'): LockError {
  if (isLockError(error)) return error;
  const what = lockName === undefined ? operation : `${operation} of ${kind} "${lockName}"`;
  const detail = error instanceof Error ? error.message : String(error);
  return new LockRedisError(`${what} failed: ${detail}`, operation, { lockName, cause: error });
}
