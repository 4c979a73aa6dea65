import type { LockCore } from '../core.js';
import type { Hold } from '../holding/holds.js';
import type { LockKeys } from '../keys.js';
import type { RLock } from './rlock.js';

/** What a lock hands a MultiLock: its identity, and calls for exactly one owner. */
export interface LockMemberParts {
  readonly lock: RLock;
  readonly core: LockCore;
  readonly keys: LockKeys;
  /** The lock and kind in its client's hold records. */
  readonly lockId: string;
  newOwner(): string;
  /** Acquires for exactly `owner`, with no Lease, and not on the list a plain `unlock()` takes from. */
  acquireAs(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<boolean>;
  /** Releases one hold of exactly `owner`; resolves with the holds left. */
  releaseAs(owner: string): Promise<number>;
  holdOf(owner: string): Hold | undefined;
  holdCountOf(owner: string): Promise<number>;
}

/**
 * A lock as one member of a MultiLock. A MultiLock takes and releases its members by exact owner,
 * never through their unscoped `unlock()`, which could release a hold another task of the same
 * client took meanwhile.
 */
export class LockMember {
  readonly #parts: LockMemberParts;

  constructor(parts: LockMemberParts) {
    this.#parts = parts;
  }

  /** The lock itself, for the calls that are the same as its public ones. */
  get lock(): RLock {
    return this.#parts.lock;
  }

  get name(): string {
    return this.#parts.lock.name;
  }

  /** This lock on this client, the same for every object made for it. */
  get identity(): string {
    return `${this.#parts.core.clientId}\u0000${this.#parts.lockId}`;
  }

  /**
   * The order every MultiLock takes its locks in, the same in every process: by key, then (same
   * key on several servers) by the server's address.
   */
  get orderKey(): string {
    const { address, deployment, db } = this.#parts.core.redis;
    return `${this.#parts.keys.lock}\u0000${address === undefined ? deployment : `${address}/${db}`}`;
  }

  /** The lock's key (without the connection's own prefix). */
  get key(): string {
    return this.#parts.keys.lock;
  }

  /** The client internals the lock belongs to. */
  get core(): LockCore {
    return this.#parts.core;
  }

  /**
   * True when `other` is this same lock (same client or connection, same key): holding both would
   * wait for oneself. `other` may come from another loaded copy of rlock: public members only.
   */
  isSameLockAs(other: LockMember): boolean {
    return this.key === other.key && (this.core === other.core || this.core.redis.connection === other.core.redis.connection);
  }

  newOwner(): string {
    return this.#parts.newOwner();
  }

  acquireAs(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<boolean> {
    return this.#parts.acquireAs(owner, waitMs, leaseMs, signal);
  }

  releaseAs(owner: string): Promise<number> {
    return this.#parts.releaseAs(owner);
  }

  holdCountOf(owner: string): Promise<number> {
    return this.#parts.holdCountOf(owner);
  }

  /** Whether this client still holds the lock for `owner` (its holder's clock has not run out). */
  isHeldBy(owner: string): boolean {
    return this.#parts.holdOf(owner) !== undefined;
  }

  /** Calls `onEnd` once `owner`'s hold ends (released, lost, expired); false if it holds none. */
  whenHoldEnds(owner: string, onEnd: () => void): boolean {
    const hold = this.#parts.holdOf(owner);
    if (!hold) return false;
    (hold.observers ??= []).push({ ended: onEnd });
    return true;
  }

  /** A failure nobody awaits, reported as an `error` event of this lock's client. */
  reportError(error: unknown): void {
    this.#parts.core.events.emit('error', error);
  }
}
