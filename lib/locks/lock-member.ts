import type { LockCore } from '../core.js';
import type { OwnerCalls } from '../owner-calls.js';
import type { RLock } from './lock-interfaces.js';

/**
 * A lock as one member of a MultiLock. A MultiLock takes and releases its members by exact owner,
 * never through their unscoped `unlock()`, which could release a hold another task of the same
 * client took meanwhile.
 */
export class LockMember {
  readonly #calls: OwnerCalls;

  constructor(
    /** The lock itself, for the calls that are the same as its public ones. */
    readonly lock: RLock,
    calls: OwnerCalls,
  ) {
    this.#calls = calls;
  }

  get name(): string {
    return this.lock.name;
  }

  /** This lock on this client, the same for every object made for it. */
  get identity(): string {
    return `${this.#calls.core.clientId}\u0000${this.#calls.lockId}`;
  }

  /**
   * The order every MultiLock takes its locks in, the same in every process: by key, then (same
   * key on several servers) by the server's address.
   */
  get orderKey(): string {
    const { address, deployment, db } = this.#calls.core.redis;
    return `${this.#calls.keys.lock}\u0000${address === undefined ? deployment : `${address}/${db}`}`;
  }

  /** The lock's key (without the connection's own prefix). */
  get key(): string {
    return this.#calls.keys.lock;
  }

  /** The client internals the lock belongs to. */
  get core(): LockCore {
    return this.#calls.core;
  }

  /**
   * True when `other` is this same lock (same client or connection, same key): holding both would
   * wait for oneself. `other` may come from another loaded copy of rlock: public members only.
   */
  isSameLockAs(other: LockMember): boolean {
    return this.key === other.key && (this.core === other.core || this.core.redis.connection === other.core.redis.connection);
  }

  newOwner(): string {
    return this.#calls.newOwner();
  }

  acquireAs(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<boolean> {
    return this.#calls.acquire(owner, waitMs, leaseMs, signal);
  }

  releaseAs(owner: string): Promise<number> {
    return this.#calls.release(owner);
  }

  holdCountOf(owner: string): Promise<number> {
    return this.#calls.holdCount(owner);
  }

  /** Whether this client still holds the lock for `owner` (its holder's clock has not run out). */
  isHeldBy(owner: string): boolean {
    return this.#calls.holdOf(owner) !== undefined;
  }

  /** Calls `onEnd` once `owner`'s hold ends (released, lost, expired); false if it holds none. */
  whenHoldEnds(owner: string, onEnd: () => void): boolean {
    const hold = this.#calls.holdOf(owner);
    if (!hold) return false;
    hold.observe({ ended: onEnd });
    return true;
  }

  /** A failure nobody awaits, reported as an `error` event of this lock's client. */
  reportError(error: unknown): void {
    this.#calls.core.events.emit('error', error);
  }
}
