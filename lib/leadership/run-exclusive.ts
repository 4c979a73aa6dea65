import { runInNewContext } from '../context.js';
import type { LockCore } from '../core.js';
import { InvalidArgumentError, LockAcquireTimeoutError } from '../errors.js';
import type { Lease } from '../lease/lease.js';
import { ReentrantLock } from '../locks/reentrant-lock.js';
import { MIN_LEASE_MS } from '../options.js';
import { checkFunction, checkLockName, checkOptions, checkSignal, MAX_DURATION_MS } from '../validate.js';

/** Options of `locks.runExclusive()`. */
export interface RunExclusiveOptions {
  /**
   * The fixed lease the lock is held with while `fn` runs, ms (required): a runner that dies
   * holds it no longer than this. Pick it longer than the job can take.
   */
  atMostFor: number;
  /**
   * The lock is kept until this long after the run started, ms, also when `fn` finished sooner,
   * so a replica whose schedule fires a little later does not run the job again. At most
   * `atMostFor`. @default 0
   */
  atLeastFor?: number;
  /** Aborts the attempt before `fn` starts (rejecting with the signal's reason). */
  signal?: AbortSignal;
}

/** What `runExclusive` resolves with: `fn`'s value when it ran, `{ ran: false }` when the lock was taken. */
export type RunExclusiveResult<T> =
  | {
      /** `fn` ran. */
      readonly ran: true;
      /** What `fn` returned (resolved). */
      readonly value: T;
    }
  | {
      /** Another run held the lock: `fn` did not run. */
      readonly ran: false;
    };

const RUN_EXCLUSIVE_OPTIONS = ['atMostFor', 'atLeastFor', 'signal'];

function describe(value: unknown): string {
  return typeof value === 'number' || value === undefined || value === null ? String(value) : typeof value;
}

function checkRunDuration(value: unknown, option: string, min: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_DURATION_MS) {
    throw new InvalidArgumentError(`\`${option}\` must be a finite number of ms from ${min} to ${MAX_DURATION_MS}, got ${describe(value)}`, {
      lockName: name,
    });
  }
  return Math.ceil(value);
}

/** The checked arguments of `runExclusive`. */
export function checkRunExclusive(name: unknown, fn: unknown, options: unknown): { name: string; atMostMs: number; atLeastMs: number; signal: AbortSignal | undefined } {
  const lockName = checkLockName(name);
  checkFunction(fn, 'fn');
  const raw = checkOptions(options, RUN_EXCLUSIVE_OPTIONS, lockName);
  if (raw.atMostFor === undefined) throw new InvalidArgumentError('`atMostFor` is required (ms the lock is held at most)', { lockName });
  const atMostMs = checkRunDuration(raw.atMostFor, 'atMostFor', MIN_LEASE_MS, lockName);
  const atLeastMs = raw.atLeastFor === undefined ? 0 : checkRunDuration(raw.atLeastFor, 'atLeastFor', 0, lockName);
  if (atLeastMs > atMostMs) {
    throw new InvalidArgumentError(`\`atLeastFor\` (${atLeastMs} ms) must not exceed \`atMostFor\` (${atMostMs} ms)`, { lockName });
  }
  return { name: lockName, atMostMs, atLeastMs, signal: checkSignal(raw.signal, lockName) };
}

/**
 * The lock of one `runExclusive` run: the plain lock of the name, so `getLock(name)` and
 * `rlock exec name` exclude the same runs. It can end a hold by keeping it in Redis until a
 * moment, instead of releasing it.
 */
class ExclusiveRunLock extends ReentrantLock {
  /**
   * Keeps `lease`'s hold in Redis for `keepMs` more at most (it then expires by itself) and
   * forgets it here. A failure leaves the lock to its lease (`atMostFor`): later, never sooner.
   */
  async keep(lease: Lease, keepMs: number): Promise<void> {
    const hold = this.holdOf(lease.owner);
    if (!hold) return;
    // No longer renewed from now on.
    this.core.holds.lastReleaseSent(hold);
    try {
      await this.core.scripts.election.keepHold(this.keys.lock, this.name, lease.owner, keepMs);
    } finally {
      // Not lost, not released: nobody is to be told when its lease ends.
      this.core.holds.end(hold);
    }
  }
}

/**
 * `locks.runExclusive()`: one attempt at the lock `name` (held with the fixed lease `atMostFor`);
 * if taken, `fn(lease)` runs and the lock is released after it, or kept until `atLeastFor` after
 * the start. `fn`'s error propagates; a failing release after `fn` is reported as an `error`
 * event (the release is retried in the background, and the lease bounds it anyway).
 */
export async function runExclusive<T>(
  core: LockCore,
  name: unknown,
  fn: (lease: Lease) => T | Promise<T>,
  options: RunExclusiveOptions,
): Promise<RunExclusiveResult<T>> {
  const { name: lockName, atMostMs, atLeastMs, signal } = checkRunExclusive(name, fn, options);
  const lock = new ExclusiveRunLock(core, lockName);
  return runInNewContext(async () => {
    let lease: Lease;
    try {
      lease = await lock.acquire({ waitTime: 0, leaseTime: atMostMs, signal });
    } catch (error) {
      if (error instanceof LockAcquireTimeoutError) return { ran: false };
      throw error;
    }
    const startedAt = performance.now();
    const settle = async (): Promise<void> => {
      const keepMs = Math.ceil(atLeastMs - (performance.now() - startedAt));
      try {
        if (keepMs > 0) await lock.keep(lease, keepMs);
        else await lease.release();
      } catch (error) {
        core.events.emit('error', error);
      }
    };
    let value: T;
    try {
      value = await fn(lease);
    } catch (error) {
      await settle();
      throw error;
    }
    await settle();
    return { ran: true, value };
  });
}
