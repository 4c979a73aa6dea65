import { tookIt } from './lost-attempt.js';
import type { LockCore } from '../core.js';
import { exclusiveWait, fencedLockKeys, type FencedLockKeys, type WaitTarget } from '../keys.js';
import type { Lease } from '../lease/lease.js';
import { checkLockArgs, checkTryLockArgs } from '../validate.js';
import type { Acquired } from '../waiting/wait.js';
import { BaseLock } from './base-lock.js';
import { waitNonFair } from '../waiting/non-fair-wait.js';
import type { HeldRequest, HoldsLeft } from '../scripts/registry.js';
import type { FencedLease, LockWaitOptions, RFencedLock, SignalOptions } from './lock-interfaces.js';

/**
 * The fenced lock: the reentrant lock's hash (owner id → hold count) plus the holder's `token`,
 * taken from a counter key that never expires, so tokens only ever grow.
 */
export class FencedLock extends BaseLock implements RFencedLock {
  readonly #keys: FencedLockKeys;
  readonly #wait: WaitTarget;

  constructor(core: LockCore, name: unknown) {
    super(core, name, 'fenced');
    this.#keys = fencedLockKeys(core.keyPrefix, this.name);
    this.#wait = exclusiveWait(this.#keys);
  }

  async lockAndGetToken(leaseTime?: number, options?: SignalOptions): Promise<number> {
    const { leaseMs, signal, maxHoldMs } = checkLockArgs(leaseTime, options, this.name);
    return tokenOf(await this.take(undefined, leaseMs, signal, maxHoldMs));
  }

  tryLockAndGetToken(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<number | null>;
  tryLockAndGetToken(options: LockWaitOptions): Promise<number | null>;
  async tryLockAndGetToken(
    waitOrOptions?: number | LockWaitOptions,
    leaseTime?: number,
    options?: SignalOptions,
  ): Promise<number | null> {
    const { waitMs, leaseMs, signal, maxHoldMs } = checkTryLockArgs(waitOrOptions, leaseTime, options, this.name);
    const acquired = await this.take(waitMs ?? 0, leaseMs, signal, maxHoldMs);
    return acquired === false ? null : tokenOf(acquired);
  }

  /** Every fenced acquisition carries its token, so the Lease always has one. */
  override acquire(options?: LockWaitOptions): Promise<FencedLease> {
    return super.acquire(options) as Promise<FencedLease>;
  }

  override withLock<T>(fn: (lease: FencedLease) => T | Promise<T>, options?: LockWaitOptions): Promise<T> {
    return super.withLock(fn as (lease: Lease) => T | Promise<T>, options);
  }

  async getToken(): Promise<number | null> {
    await this.open();
    const token = await this.query(this.core.redis.command(['hget', this.#keys.lock, 'token'], this.#keys.lock));
    return token === null ? null : Number(token);
  }

  protected override acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false> {
    const { core } = this;
    const ttlMs = this.ttlFor(leaseMs);
    return waitNonFair(this.core, this.#wait, waitMs, signal, (mode) => this.requestAttempt(owner, ttlMs, async (request) => {
      const sentAt = performance.now();
      const reply = await core.scripts.lock.fencedAcquire(this.#keys, owner, ttlMs, core.waiters.listenerId, mode, request);
      return 'token' in reply ? { acquired: true, sentAt, token: reply.token } : { acquired: false, ttlMs: reply.ttlMs };
    }, tookIt), () => this.abandon(owner));
  }

  protected override releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<HoldsLeft> {
    const { core } = this;
    return this.request(owner, (request) => core.scripts.lock.release(this.#keys, owner, reExpireMs, request, core.publish, recordMs), held);
  }
}

function tokenOf(acquired: Acquired | false): number {
  // lock() without a wait budget only resolves once acquired, and the fenced script always
  // answers an acquisition with its token.
  if (acquired === false || acquired.token === undefined) throw new Error('rlock: a fenced acquisition came back without a token');
  return acquired.token;
}
