import type { HoldsLeft } from './scripts/registry.js';
import type { LockCore } from './core.js';
import type { Hold } from './holding/hold.js';
import type { ReleaseTicket } from './holding/pending-release.js';
import type { LockKeys } from './keys.js';
import type { HoldKind } from './kinds.js';
import type { RenewTarget, WaiterMode } from './scripts/script-types.js';

/**
 * The one way into a lock's (or semaphore's) holds by an explicit owner, never through the
 * caller's context: MultiLock takes and releases its members with it, RedLock drives its nodes,
 * `lease.handOff()` and `locks.adopt()` move holds (as Redisson's lock offers
 * `unlockAsync(threadId)` to its MultiLock). A registry symbol, so composites of one loaded copy
 * of rlock (ESM or CJS) take the locks of the other; versioned, since the shape is internal.
 */
export const OWNER_CALLS = Symbol.for('rlock.ownerCalls.v1');

/** Holds by exact owner: what every kind offers (a semaphore's owner is a permit's id). */
export interface OwnerHolds {
  readonly core: LockCore;
  readonly name: string;
  readonly kind: HoldKind;
  /** The lock and kind in the client's hold records. */
  readonly lockId: string;
  /** The client's record of `owner`'s holds, if it holds any by its clock. */
  holdOf(owner: string): Hold | undefined;
  /** How the watchdog renews `owner`'s hold (its script, keys and holder). */
  target(owner: string): RenewTarget;
  /** Releases `count` holds of `owner` in the background, nobody waiting (see Hold.letGo). */
  letGo(owner: string): (count: number) => void;
  /** The Lease (or Permit) of `owner`'s whole hold, once the client's records have it (adopt). */
  lease(owner: string, token: number | undefined): unknown;
}

/** A lock's calls by exact owner (every lock kind). */
export interface OwnerCalls extends OwnerHolds {
  readonly keys: LockKeys;
  /** An owner id for a new holder: the current context's, or a fresh one. */
  newOwner(): string;
  /** Acquires for `owner` with the kind's waiting, no Lease, not on the list a plain `unlock()` takes from. */
  acquire(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<boolean>;
  /** Releases one hold of `owner` through its hold record (see releaseHold); the holds left. `ticket`: the same release tried again. */
  release(owner: string, ticket?: ReleaseTicket): Promise<number>;
  /** One release call with no hold record (an undo): the holds left, or ScriptStatus.NotHeld. */
  sendRelease(owner: string, reExpireMs: number, recordMs: number): Promise<HoldsLeft>;
  /** `owner`'s hold count in Redis, 0 if none. */
  holdCount(owner: string): Promise<number>;
  /**
   * Counts an acquisition (sent at `sentAt`) as a quiet hold: renewed by this client's watchdog
   * at most `maxRenewals` times, ended by its clock; its observer (a RedLock) decides on its loss.
   */
  track(owner: string, sentAt: number, leaseMs: number, maxRenewals: number | undefined): Hold;
  /**
   * One acquisition attempt (or re-entry) with no waiting, a TTL of `ttlMs`: null when acquired,
   * else the holder's PTTL. Only a plain lock has it (a RedLock's node).
   */
  readonly attempt?: (owner: string, ttlMs: number, mode: WaiterMode) => Promise<number | null>;
}

/** A lock or semaphore of this or another loaded copy of rlock. */
interface HasOwnerCalls {
  [OWNER_CALLS](): OwnerHolds;
}

function hasOwnerCalls(value: unknown): value is HasOwnerCalls {
  return typeof value === 'object' && value !== null && typeof (value as Partial<HasOwnerCalls>)[OWNER_CALLS] === 'function';
}

/** The holds by owner of a lock or semaphore; undefined for anything else. */
export function ownerHoldsOf(value: unknown): OwnerHolds | undefined {
  return hasOwnerCalls(value) ? value[OWNER_CALLS]() : undefined;
}

/** The owner calls of a lock (not a semaphore's); undefined for anything else. */
export function ownerCallsOf(value: unknown): OwnerCalls | undefined {
  const calls = ownerHoldsOf(value);
  return calls && 'acquire' in calls ? (calls as OwnerCalls) : undefined;
}
