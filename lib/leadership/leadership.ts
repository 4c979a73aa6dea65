import { ScriptStatus } from '../scripts/registry.js';
import { InvalidArgumentError, LockLostError, LockNotHeldError } from '../errors.js';
import type { Lease } from '../lease/lease.js';
import type { ElectionLock } from './election-lock.js';

/** A leader's value: any string (the default is ''). */
export function checkLeaderValue(value: unknown, lockName: string): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new InvalidArgumentError(`\`value\` must be a string, got ${typeof value}`, { lockName });
  return value;
}

/**
 * This caller's leadership of an election, from a resolved `campaign()`: its `epoch` (a fencing
 * token: greater than every earlier leader's of the name), the `value` it publishes, and a
 * `signal` that aborts with a LockLostError when the leadership is lost (renewal found it gone,
 * or no renewal was confirmed within the lease: the holder's clock), before a rival's campaign
 * can resolve. `resign()` steps down (`await using` does too).
 */
export class Leadership implements AsyncDisposable {
  /** The election's name. */
  readonly name: string;
  /** This leadership's epoch: strictly greater than every earlier leader's of this name. */
  readonly epoch: number;
  readonly #lock: ElectionLock;
  readonly #lease: Lease;
  #value: string;
  /** Proclaims run one after another, so `value` ends as Redis has it. */
  #proclaiming: Promise<unknown> = Promise.resolve();

  /** @internal Made by `Election.campaign`. */
  constructor(lock: ElectionLock, lease: Lease, epoch: number, value: string) {
    this.name = lock.name;
    this.epoch = epoch;
    this.#lock = lock;
    this.#lease = lease;
    this.#value = value;
  }

  /** The value this leader publishes: its campaign's, then its latest `proclaim`'s. */
  get value(): string {
    return this.#value;
  }

  /** Aborts (LockLostError) when the leadership is lost; not on `resign()`. */
  get signal(): AbortSignal {
    return this.#lease.signal;
  }

  /** The owner id this leadership holds the election as. */
  get owner(): string {
    return this.#lease.owner;
  }

  /**
   * Publishes a new value without a new election: `leader()` answers it at once and observers
   * see it as a change. A resend after a lost reply is applied once.
   * @throws LockLostError when the leadership was lost, LockNotHeldError after `resign()`,
   *   InvalidArgumentError for a non-string value, LockRedisError when Redis failed.
   */
  proclaim(value: string): Promise<void> {
    if (typeof value !== 'string') {
      return Promise.reject(new InvalidArgumentError(`\`value\` must be a string, got ${typeof value}`, { lockName: this.name }));
    }
    const run = this.#proclaiming.catch(() => undefined).then(() => this.#proclaim(value));
    this.#proclaiming = run;
    return run;
  }

  /** Steps down: the election is free at once and the next campaigner leads. Idempotent. */
  resign(): Promise<void> {
    return this.#lease.release();
  }

  /** `await using leadership = await election.campaign()`: resigns when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.resign();
  }

  async #proclaim(value: string): Promise<void> {
    const core = this.#lock.lockCore;
    if (this.#lease.released) throw new LockNotHeldError(`election "${this.name}": this leadership resigned`, { lockName: this.name });
    this.#lease.signal.throwIfAborted();
    core.assertOpen();
    const keys = this.#lock.electionKeys;
    const rev = await core.scripts.requests.send(keys.election, this.owner, (request) => core.scripts.election.proclaim(keys, this.owner, request, value, core.publish));
    if (rev === ScriptStatus.NotHeld) {
      throw new LockLostError(`election "${this.name}": leadership of epoch ${this.epoch} is lost (proclaim found another leader or none)`, 'deleted', {
        lockName: this.name,
      });
    }
    this.#value = value;
  }
}
