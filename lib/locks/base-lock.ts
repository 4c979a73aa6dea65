import { currentContext, newContextId, ownerId, runInNewContext } from '../context.js';
import type { LockCore } from '../core.js';
import { LockAcquireTimeoutError, LockLostError, LockNotHeldError, LockReplicationError, ScriptStatus } from '../errors.js';
import { lockKeys, type LockKeys } from '../keys.js';
import { Lease } from '../lease.js';
import {
  checkFunction,
  checkLeaseTime,
  checkLockName,
  checkObject,
  checkSignal,
  checkWaitTime,
  WATCHDOG_LEASE,
} from '../validate.js';
import type { LockWaitOptions, RLock, SignalOptions } from './rlock.js';

interface ParsedWait {
  waitMs: number | undefined;
  leaseMs: number;
  signal: AbortSignal | undefined;
}

/**
 * What every lock kind shares: owner resolution (contexts and unscoped holds), argument
 * checks, watchdog and event bookkeeping, leases, withLock/acquire and the hash queries.
 * A kind supplies how to acquire (with its waiting strategy) and how to release.
 */
export abstract class BaseLock implements RLock {
  readonly name: string;
  protected readonly core: LockCore;
  protected readonly keys: LockKeys;
  /** Where this client remembers its unscoped hold of this lock. */
  readonly #unscopedKey: string;

  protected constructor(core: LockCore, name: unknown, kind: string) {
    this.name = checkLockName(name);
    this.core = core;
    this.keys = lockKeys(core.keyPrefix, this.name);
    this.#unscopedKey = `${kind}\u0000${this.keys.lock}`;
  }

  /**
   * Acquires for `owner`: `waitMs` 0 is one attempt, undefined waits without limit.
   * Resolves with performance.now() when the successful attempt was sent, or false.
   */
  protected abstract acquireFor(
    owner: string,
    waitMs: number | undefined,
    leaseMs: number,
    signal: AbortSignal | undefined,
  ): Promise<number | false>;

  /**
   * Releases one hold of `owner`; `reExpireMs` (0: keep) resets the TTL when holds remain.
   * Resolves with the remaining hold count or ScriptStatus.NotHeld.
   */
  protected abstract releaseFor(owner: string, reExpireMs: number): Promise<number>;

  async lock(leaseTime?: number, options?: SignalOptions): Promise<void> {
    const leaseMs = checkLeaseTime(leaseTime, this.name);
    const { signal } = this.#parseSignal(options);
    await this.#open();
    await this.#acquire(this.#acquiringOwner(), undefined, leaseMs, signal);
  }

  tryLock(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<boolean>;
  tryLock(options: LockWaitOptions): Promise<boolean>;
  async tryLock(
    waitOrOptions?: number | LockWaitOptions,
    leaseTime?: number,
    options?: SignalOptions,
  ): Promise<boolean> {
    const parsed =
      typeof waitOrOptions === 'object' && waitOrOptions !== null
        ? this.#parseWait(waitOrOptions)
        : {
            waitMs: checkWaitTime(waitOrOptions, this.name),
            leaseMs: checkLeaseTime(leaseTime, this.name),
            signal: this.#parseSignal(options).signal,
          };
    await this.#open();
    const acquired = await this.#acquire(this.#acquiringOwner(), parsed.waitMs ?? 0, parsed.leaseMs, parsed.signal);
    return acquired !== false;
  }

  async unlock(): Promise<void> {
    await this.#open();
    const owner = this.#currentOwner();
    if (owner === undefined) throw this.#notHeld();
    await this.#release(owner);
  }

  async forceUnlock(): Promise<boolean> {
    await this.#open();
    return this.core.scripts.forceUnlock(this.keys, this.core.publish);
  }

  async isLocked(): Promise<boolean> {
    await this.#open();
    return (await this.core.redis.exists(this.keys.lock)) === 1;
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  async getHoldCount(): Promise<number> {
    await this.#open();
    const owner = this.#currentOwner();
    if (owner === undefined) return 0;
    return Number((await this.core.redis.hget(this.keys.lock, owner)) ?? 0);
  }

  async remainTimeToLive(): Promise<number> {
    await this.#open();
    return this.core.redis.pttl(this.keys.lock);
  }

  async acquire(options?: LockWaitOptions): Promise<Lease> {
    const { waitMs, leaseMs, signal } = this.#parseWait(options);
    await this.#open();
    const owner = this.#acquiringOwner();
    const sentAt = await this.#acquire(owner, waitMs, leaseMs, signal);
    if (sentAt === false) {
      throw new LockAcquireTimeoutError(`timed out after ${waitMs} ms waiting for lock "${this.name}"`, waitMs ?? 0, {
        lockName: this.name,
      });
    }
    return this.#lease(owner, leaseMs, sentAt);
  }

  async withLock<T>(fn: (lease: Lease) => T | Promise<T>, options?: LockWaitOptions): Promise<T> {
    const body = checkFunction<(lease: Lease) => T | Promise<T>>(fn, 'fn');
    this.#parseWait(options);
    const run = async (): Promise<T> => {
      const lease = await this.acquire(options);
      let result: T;
      try {
        result = await body(lease);
      } catch (error) {
        // fn's error is the one to see; a failed release is still reported.
        await lease.release().catch((releaseError: unknown) => this.core.events.emit('error', releaseError));
        throw error;
      }
      await lease.release();
      return result;
    };
    // The callback runs in a context, so nested calls on this lock re-enter it.
    return currentContext() ? run() : runInNewContext(run);
  }

  /** Releases one hold of `owner` quietly: for acquisitions nobody waits for any more. */
  protected abandon(owner: string): void {
    this.releaseFor(owner, 0).catch((error: unknown) => this.core.events.emit('error', error));
  }

  async #acquire(
    owner: string,
    waitMs: number | undefined,
    leaseMs: number,
    signal: AbortSignal | undefined,
  ): Promise<number | false> {
    signal?.throwIfAborted();
    const sentAt = await this.acquireFor(owner, waitMs, leaseMs, signal);
    if (sentAt === false) return false;
    if (this.core.syncReplicas) await this.#confirmReplicas(owner);
    // Synchronously with the reply: renewal must be registered before user code runs.
    if (leaseMs === WATCHDOG_LEASE) this.core.watchdog.track(this.keys, owner, sentAt);
    if (!currentContext()) this.core.unscopedOwners.set(this.#unscopedKey, owner);
    this.core.events.emit('acquired', { name: this.name, owner });
    return sentAt;
  }

  /** `syncReplicas`: WAIT for the acks; too few → roll the acquisition back and fail. */
  async #confirmReplicas(owner: string): Promise<void> {
    const ack = this.core.syncReplicas;
    if (!ack) return;
    let acks: number;
    try {
      acks = await this.core.scripts.waitForReplicas(this.keys.lock, ack);
    } catch (error) {
      this.abandon(owner);
      throw error;
    }
    if (acks >= ack.replicas) return;
    await this.releaseFor(owner, 0);
    throw new LockReplicationError(
      `lock "${this.name}" was acquired but confirmed by ${acks} of ${ack.replicas} replicas within ` +
        `${ack.timeoutMs} ms, so it was released again`,
      acks,
      ack.replicas,
      { lockName: this.name },
    );
  }

  /** Throws once the client is closed; waits until the client knows its topology. */
  async #open(): Promise<void> {
    this.core.assertOpen();
    await this.core.ready();
  }

  async #release(owner: string): Promise<number> {
    const { watchdog } = this.core;
    const reExpireMs = watchdog.get(this.keys, owner) ? this.core.watchdogTimeoutMs : 0;
    watchdog.beginRelease(this.keys, owner);
    const epoch = this.core.connectionEpoch();
    let left: number | undefined;
    try {
      left = await this.releaseFor(owner, reExpireMs);
      // ioredis resends unanswered commands after a reconnect. A final release that ran
      // before the connection dropped finds nothing to release when resent: that is success.
      if (left === ScriptStatus.NotHeld && this.core.connectionEpoch() !== epoch) left = 0;
    } finally {
      watchdog.endRelease(this.keys, owner, left);
    }
    if (left <= 0 && this.core.unscopedOwners.get(this.#unscopedKey) === owner) {
      this.core.unscopedOwners.delete(this.#unscopedKey);
    }
    if (left === ScriptStatus.NotHeld) throw this.#notHeld();
    if (left === 0) this.core.events.emit('released', { name: this.name, owner });
    return left;
  }

  #lease(owner: string, leaseMs: number, sentAt: number): Lease {
    const controller = new AbortController();
    const hold = leaseMs === WATCHDOG_LEASE ? this.core.watchdog.get(this.keys, owner) : undefined;
    hold?.leases.add(controller);
    let expiry: NodeJS.Timeout | undefined;
    if (leaseMs !== WATCHDOG_LEASE) {
      // A fixed lease is not renewed: tell the holder when it has run out.
      expiry = setTimeout(() => {
        const error = new LockLostError(`lease of lock "${this.name}" ran out before release`, 'expired', {
          lockName: this.name,
        });
        controller.abort(error);
        this.core.events.emit('lost', { name: this.name, owner, reason: 'expired' });
      }, Math.max(0, leaseMs - (performance.now() - sentAt)));
      expiry.unref();
    }
    return new Lease({
      name: this.name,
      owner,
      signal: controller.signal,
      release: async () => {
        clearTimeout(expiry);
        hold?.leases.delete(controller);
        try {
          await this.#release(owner);
        } catch (error) {
          // Already reported through the signal and `lost`: releasing a lost lock is no news.
          if (!(controller.signal.aborted && error instanceof LockNotHeldError)) throw error;
        }
      },
    });
  }

  /** The owner acquiring now: the context's, or a fresh one outside any context. */
  #acquiringOwner(): string {
    return ownerId(this.core.clientId, currentContext()?.id ?? newContextId());
  }

  /** The owner whose holds unlock and the queries concern. */
  #currentOwner(): string | undefined {
    const context = currentContext();
    return context ? ownerId(this.core.clientId, context.id) : this.core.unscopedOwners.get(this.#unscopedKey);
  }

  #notHeld(): LockNotHeldError {
    return new LockNotHeldError(`lock "${this.name}" is not held by the current owner`, { lockName: this.name });
  }

  #parseSignal(options: unknown): { signal: AbortSignal | undefined } {
    return { signal: checkSignal(checkObject(options, 'options').signal, this.name) };
  }

  #parseWait(options: unknown): ParsedWait {
    const raw = checkObject(options, 'options');
    return {
      waitMs: checkWaitTime(raw.waitTime, this.name),
      leaseMs: checkLeaseTime(raw.leaseTime, this.name),
      signal: checkSignal(raw.signal, this.name),
    };
  }
}
