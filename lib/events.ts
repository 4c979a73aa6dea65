import type { LockLostReason } from './errors.js';

/** Payload of `acquired`, `released` and `renewed`. */
export interface LockEventInfo {
  /** The lock's name. */
  readonly name: string;
  /** The owner id: `${clientId}:${contextId}`. */
  readonly owner: string;
}

/** Payload of `acquired`. */
export interface LockAcquiredInfo extends LockEventInfo {
  /** ms from the call to the acquisition (undefined on a RedLock's event). */
  readonly waitMs?: number;
  /** Attempts sent to Redis, this one included: 1 when the lock was free (undefined on a RedLock's event). */
  readonly attempts?: number;
}

/** Payload of `released`. */
export interface LockReleasedInfo extends LockEventInfo {
  /** ms the owner held the lock, from its first acquisition to this last release (undefined on a RedLock's event). */
  readonly heldMs?: number;
}

/** Payload of `warning`: something about the Redis deployment puts locks at risk. */
export interface LockWarningInfo {
  /** `RLOCK_EVICTION_POLICY`: Redis may evict keys that have a TTL, lock keys among them. */
  readonly code: 'RLOCK_EVICTION_POLICY';
  /** What is wrong and how to fix it. */
  readonly message: string;
  /** The server it concerns (`host:port`). */
  readonly server: string;
  /** The `maxmemory-policy` the server reported. */
  readonly policy: string;
}

/** Payload of `lost`. */
export interface LockLostInfo extends LockEventInfo {
  /** Why the lock was lost. */
  readonly reason: LockLostReason;
}

/** Events of {@link LockClient}. */
export interface LockClientEvents {
  /** A lock was acquired or re-entered by `owner`, after `waitMs` and `attempts`. */
  acquired: [info: LockAcquiredInfo];
  /** The last hold of `owner` was released, after `heldMs`. */
  released: [info: LockReleasedInfo];
  /** The watchdog renewed a hold (watchdog mode: every third of `watchdogTimeout`). */
  renewed: [info: LockEventInfo];
  /**
   * A held lock was lost (`reason`: deleted, taken, expired, quorum, max-hold-time, stalled); every Lease of the hold
   * aborts. Without a listener, the first one becomes a process warning (`RLOCK_UNHEARD_LOST`).
   */
  lost: [info: LockLostInfo];
  /**
   * A background failure nobody awaits: a renewal, a release retried in the background, the
   * pub/sub connection. Without a listener, the first one becomes a process warning
   * (`RLOCK_UNHEARD_ERROR`).
   */
  error: [error: unknown];
  /**
   * The Redis deployment puts locks at risk (once per client and server): a `maxmemory-policy`
   * that may evict lock keys. Also a `process.emitWarning` (type `RLockWarning`, same `code`).
   */
  warning: [info: LockWarningInfo];
}
