import { InvalidArgumentError } from '../errors.js';
import type { HandOffOptions, HandOffReservation } from './lease-moves.js';
import type { LeaseHandle } from './lease-handle.js';
import { Releasable } from './releasable.js';
import { checkHandOffOptions } from '../validate.js';

/** What a Lease can do with its hold besides releasing it (lib/lease/lease-moves.ts). */
export interface LeaseMovesInit {
  extend(ms: number): Promise<void>;
  handOff(options?: HandOffOptions): Promise<LeaseHandle>;
  /** Checks and reserves the hand-off now, to send it later (a MultiLock's members); absent: handOff at send. */
  reserveHandOff?(options?: HandOffOptions): HandOffReservation;
}

/**
 * Package-internal: `lease[RESERVE_HAND_OFF](options)` checks and reserves the Lease's hand-off
 * (see HandOffReservation). A registry symbol, versioned: a MultiLock may combine Leases of another
 * loaded copy of rlock.
 */
export const RESERVE_HAND_OFF = Symbol.for('rlock.reserveHandOff.v1');

/**
 * A Lease's abort, with its AbortController made only when someone reads the signal: most leases
 * are released without anyone looking at it, and a controller is the dearest part of a lease.
 */
export class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** What a Lease is built from. */
export interface LeaseInit {
  readonly name: string;
  readonly owner: string;
  /** The signal, or the lazy abort that makes it when read. */
  readonly signal: AbortSignal | LazyAbort;
  readonly token?: number;
  readonly release: () => Promise<void>;
  /** extend and handOff; a Lease without them refuses both. */
  readonly moves?: LeaseMovesInit | undefined;
}

/**
 * One acquisition of a lock. `signal` aborts (with a LockLostError) when the lock is lost:
 * renewal found it gone or owned by another, or the holder can no longer be sure it holds it
 * (no renewal or acquisition confirmed within the lease). `release()` is idempotent, and may be
 * called again after it rejected (the retry is the same release); `await using lease = await
 * lock.acquire()` releases on scope exit.
 */
export class Lease extends Releasable {
  /** The lock's name. */
  readonly name: string;
  /** The owner id holding this lease: `${clientId}:${contextId}`. */
  readonly owner: string;
  /** The fencing token, for fenced locks. */
  readonly token: number | undefined;
  readonly #signal: AbortSignal | LazyAbort;
  readonly #moves: LeaseMovesInit | undefined;

  /** @internal Leases are made by the locks (`acquire`, `withLock`) and by `locks.adopt()`. */
  constructor(init: LeaseInit) {
    super(init.release);
    this.name = init.name;
    this.owner = init.owner;
    this.#signal = init.signal;
    this.token = init.token;
    this.#moves = init.moves;
  }

  /**
   * For a hold taken with a `leaseTime`: the lease now ends `ms` from the moment Redis confirms
   * this call (never sooner than it already would: a lease is never shortened); the holder's clock
   * and `signal` follow. Applied once, also when the call is resent after a dropped connection.
   * @throws InvalidArgumentError for a bad `ms` (as for `leaseTime`) or a watchdog-mode hold.
   * @throws LockLostError when the hold is gone (released, lost, handed off).
   */
  extend(ms: number): Promise<void> {
    return this.#moves ? this.#moves.extend(ms) : Promise.reject(unsupported(this.name, 'extend'));
  }

  /**
   * Hands the hold (all of its owner's re-entries) to another process: resolves with a
   * JSON-serialisable {@link LeaseHandle} for `locks.adopt(handle)`. This process stops renewing
   * it and no longer holds it: `signal` aborts with LockHandedOffError, and `release()` resolves
   * and changes nothing. Until it is adopted nobody renews the hold: in watchdog mode it is kept
   * `adoptWithin` (default: `watchdogTimeout`) from now, no longer; a fixed lease keeps its end.
   * Until it settles, the owner's other calls on the lock are refused (LockHandedOffError); after
   * it, the lock context that took the hold may not take that lock again.
   * @throws LockLostError when the hold is gone.
   * @throws LockError when a release is retried in the background, or another call of the owner
   *   on the lock (an acquisition, re-entry, release or extension) is under way: nothing moved.
   * @example
   * const lease = await locks.getLock('invoice:42').acquire();
   * await queue.add('charge', { handle: await lease.handOff() });
   * // in the worker:  const lease = await locks.adopt(job.data.handle); … await lease.release();
   */
  handOff(options?: HandOffOptions): Promise<LeaseHandle> {
    if (!this.#moves) return Promise.reject(unsupported(this.name, 'handOff'));
    try {
      checkHandOffOptions(options, this.name);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#moves.handOff(options);
  }

  /** @internal See RESERVE_HAND_OFF. */
  [RESERVE_HAND_OFF](options?: HandOffOptions): HandOffReservation {
    const moves = this.#moves;
    if (moves?.reserveHandOff) return moves.reserveHandOff(options);
    return { send: () => this.handOff(options), cancel: () => undefined };
  }

  /** Aborted when the lock is lost while the lease is unreleased. */
  get signal(): AbortSignal {
    return this.#signal instanceof LazyAbort ? this.#signal.signal : this.#signal;
  }
}

function unsupported(name: string, what: string): InvalidArgumentError {
  return new InvalidArgumentError(`the Lease of "${name}" does not support ${what}()`, { lockName: name });
}
