import type { LockCore } from '../core.js';
import type { Hold } from '../holding/holds.js';
import type { LockKeys } from '../keys.js';
import type { WaiterMode } from '../scripts/registry.js';
import type { ReleaseTicket } from '../holding/hold-release.js';

/**
 * One lock on one Redis node, driven for an explicit owner, one command per call and no waiting:
 * what a RedLock runs on each of its nodes. The RedLock decides the owner, the timing and the
 * quorum; the node lock only speaks to its Redis.
 */
export interface NodeLock {
  readonly core: LockCore;
  readonly keys: LockKeys;
  /**
   * One acquisition attempt (or re-entry) with a TTL of `ttlMs`: null when acquired, otherwise
   * the holder's PTTL in ms (-1: the key has no TTL). `mode` is the waiter bookkeeping.
   */
  attempt(owner: string, ttlMs: number, mode: WaiterMode): Promise<number | null>;
  /**
   * Releases one hold; `reExpireMs` (0: keep) is the TTL the lock keeps at least when holds
   * remain; a final release is remembered `recordMs` to answer a resend. Resolves with the hold
   * count left, or ScriptStatus.NotHeld.
   */
  release(owner: string, reExpireMs: number, recordMs: number): Promise<number>;
  /**
   * Counts a granted acquisition (sent at `sentAt`) in this node's client's hold records, as a
   * quiet node hold: that client's watchdog renews it in watchdog mode (at most `maxRenewals`
   * times) and its holder's clock ends it; the RedLock observes it.
   */
  track(owner: string, sentAt: number, leaseMs: number, maxRenewals: number | undefined): Hold;
  /** This node's client's record of `owner`'s hold, if it holds one by that client's clock. */
  heldRecord(owner: string): Hold | undefined;
  /**
   * Releases one hold of `owner` through its hold record (see releaseHold); the holds left.
   * `ticket`: the same release tried again (a retried RedLock release); otherwise a new one.
   */
  releaseHeld(owner: string, ticket?: ReleaseTicket): Promise<number>;
  /** `owner`'s hold count on this node, 0 if none. */
  holdCount(owner: string): Promise<number>;
}

/**
 * The key under which a lock kind offers its {@link NodeLock}. Package-internal: it is not
 * exported from the package root, so the node operations are no public API. A registry symbol,
 * so that a RedLock of one loaded copy of rlock (ESM or CJS) takes the locks of the other;
 * versioned, since the NodeLock shape is internal.
 */
export const NODE_LOCK = Symbol.for('rlock.nodeLock.v1');

/** A lock kind that can serve as one node of a RedLock. */
export interface NodeLockSource {
  [NODE_LOCK](): NodeLock;
}

/** The node lock behind `value`, or undefined if it is no lock that can be a RedLock node. */
export function nodeLockOf(value: unknown): NodeLock | undefined {
  if (typeof value !== 'object' || value === null || !(NODE_LOCK in value)) return undefined;
  return (value as NodeLockSource)[NODE_LOCK]();
}
