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
  | 'max-hold-time';

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

/** The RedLock call that found no majority. */
export type RedLockOperation = 'acquire' | 'renew' | 'release' | 'query' | 'extend' | 'handOff' | 'adopt';

/** A RedLock node that did not answer usefully. */
export interface RedLockNodeFailure {
  /** The node's position among the RedLock's locks, from 0. */
  readonly node: number;
  /** `timeout`: no answer within the per-node timeout; `error`: the call failed. */
  readonly reason: 'timeout' | 'error';
  /** The error, for `reason: 'error'`. */
  readonly error?: unknown;
}

/** What the nodes of one RedLock round answered. */
export interface RedLockRoundInfo {
  /** The RedLock call the round belongs to. */
  readonly operation: RedLockOperation;
  /** Nodes of the RedLock. */
  readonly nodes: number;
  /** Nodes needed: a majority, nodes / 2 + 1. */
  readonly quorum: number;
  /**
   * Nodes that said yes: granted (acquire), renewed (renew), held by the owner (release), answered
   * (query), extended (extend), handed off (handOff), adopted (adopt).
   */
  readonly granted: number;
  /**
   * Nodes that said no: held by another owner (acquire), gone or held by another owner (renew),
   * not held by this owner (release, extend, handOff), adopted already or ended (adopt); 0 for queries.
   */
  readonly refused: number;
  /** Nodes that timed out or failed, with the reason for each. */
  readonly failures: readonly RedLockNodeFailure[];
  /** Nodes whose answer was not awaited because the outcome was already certain. */
  readonly unanswered: number;
  /** From sending the round until its outcome was known, ms. */
  readonly elapsedMs: number;
  /** For an acquisition granted by a majority too late: lease − elapsed − drift, ms (≤ 0). */
  readonly validityMs?: number;
  /** Acquisition rounds made by the call that gave up (1 for the other operations). */
  readonly attempts: number;
}

const ROUND_WORDS: Record<RedLockOperation, [yes: string, no: string]> = {
  acquire: ['granted', 'refused (held by another owner)'],
  renew: ['renewed', 'refused (gone or held by another owner)'],
  release: ['held by the owner', 'refused (not held by this owner)'],
  query: ['answered', 'refused'],
  extend: ['extended', 'refused (no longer held by the owner)'],
  handOff: ['handed off', 'refused (no longer held by the owner)'],
  adopt: ['adopted', 'refused (adopted already, or ended)'],
};

/** One line on what a RedLock round's nodes answered. */
export function describeRedLockRound(info: RedLockRoundInfo): string {
  const [yes, no] = ROUND_WORDS[info.operation];
  const failures = info.failures.map((failure) => {
    const why = failure.reason === 'timeout' ? 'timed out' : failure.error instanceof Error ? failure.error.message : String(failure.error);
    return `node ${failure.node}: ${why}`;
  });
  const parts = [`${info.granted} ${yes}`, `${info.refused} ${no}`, `${info.failures.length} failed${failures.length ? ` (${failures.join('; ')})` : ''}`];
  if (info.unanswered > 0) parts.push(`${info.unanswered} not awaited`);
  const late =
    info.validityMs === undefined ? '' : `; a majority granted, but the validity ran out (${info.validityMs} ms left)`;
  const attempts = info.attempts > 1 ? `, last of ${info.attempts} attempts` : '';
  return `${info.operation}: ${info.quorum} of ${info.nodes} nodes needed, in ${Math.round(info.elapsedMs)} ms${attempts}: ${parts.join(', ')}${late}`;
}

/**
 * A RedLock round reached no majority. It tells what each node answered: how many granted,
 * how many refused because the lock is held elsewhere, how many failed and why, and how long it
 * took. `tryLock` returns false instead (see `RedLock.lastFailure`); `acquire`/`withLock` reject
 * with a LockAcquireTimeoutError whose `cause` is this; a lost majority while held aborts the
 * Lease with a LockLostError (reason `quorum`) whose `cause` is this.
 */
export class RedLockQuorumError extends LockError implements RedLockRoundInfo {
  /** `'RedLockQuorumError'`. */
  override readonly name = 'RedLockQuorumError' as const;
  override readonly code = 'REDLOCK_NO_QUORUM' as const;
  /** The RedLock call whose round found no majority. */
  readonly operation: RedLockOperation;
  readonly nodes: number;
  readonly quorum: number;
  readonly granted: number;
  readonly refused: number;
  readonly failures: readonly RedLockNodeFailure[];
  /** Nodes that timed out or failed: `failures.length`. */
  readonly failed: number;
  readonly unanswered: number;
  readonly elapsedMs: number;
  readonly validityMs: number | undefined;
  readonly attempts: number;

  constructor(info: RedLockRoundInfo, options: LockErrorOptions = {}) {
    super(`RedLock${options.lockName === undefined ? '' : ` "${options.lockName}"`} reached no majority: ${describeRedLockRound(info)}`, options);
    this.operation = info.operation;
    this.nodes = info.nodes;
    this.quorum = info.quorum;
    this.granted = info.granted;
    this.refused = info.refused;
    this.failures = info.failures;
    this.unanswered = info.unanswered;
    this.elapsedMs = info.elapsedMs;
    this.validityMs = info.validityMs;
    this.attempts = info.attempts;
    this.failed = info.failures.length;
  }
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
