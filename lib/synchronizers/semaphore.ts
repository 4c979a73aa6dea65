import type { LockCore } from '../core.js';
import { InvalidArgumentError, LockAcquireTimeoutError } from '../errors.js';
import { holdDrift, type Hold, type RenewTarget } from '../holding/holds.js';
import { addLease, removeLease } from '../holding/hold-leases.js';
import { OWNER_CALLS, type OwnerHolds } from '../owner-calls.js';
import { KINDS, lockIdOf } from '../kinds.js';
import { movesOf } from '../lease/lease-moves.js';
import { capHold } from '../holding/cap-hold.js';
import { releaseHold, type ReleaseTicket } from '../holding/release-hold.js';
import { confirmReplicas } from '../holding/confirm-replicas.js';
import { semaphoreKeys, type SemaphoreKeys } from '../keys.js';
import type { SynchronizerScripts } from '../scripts/semaphore-scripts.js';
import { AcquireTrack } from '../telemetry/channels.js';
import { traceRelease } from '../telemetry/tracing.js';
import { checkFunction, checkLockName, checkOptions, checkWaitOptions, WAIT_OPTIONS, WATCHDOG_LEASE } from '../validate.js';
import { Permit } from './permit.js';
import { waitForNotice, waitInTurn, type PermitRequest } from './permit-wait.js';
import { checkCount, describe } from './semaphore-options.js';

/** Options of `getSemaphore`. */
export interface SemaphoreOptions {
  /** The limit: the most permits out at once. A whole number ≥ 1; use one limit per name. */
  permits: number;
  /** Strict arrival order across processes (a large request at the head is not overtaken). @default false */
  fair?: boolean;
}

/** Options of `acquire`, `tryAcquire` and `withPermit`. */
export interface PermitOptions {
  /** How many permits, 1 to the limit. @default 1 */
  permits?: number;
  /** ms to wait; 0 makes one attempt. Omitted: `tryAcquire` makes one attempt, the others wait without limit. */
  waitTime?: number;
  /** The lease, ms (at least 50); omitted or -1: renewed by the client's watchdog while held. */
  leaseTime?: number;
  /** Aborts the wait (rejecting with the signal's reason). */
  signal?: AbortSignal;
  /** Watchdog mode: renew the permit for at most this long, ms (see the client's `maxHoldTime`). */
  maxHoldTime?: number;
}

/** A counting semaphore with leased permits: `locks.getSemaphore(name, { permits, fair? })`. */
export interface RSemaphore {
  /** The semaphore's name. */
  readonly name: string;
  /** The limit this object checks requests against. */
  readonly permits: number;
  /** Whether permits go in strict arrival order across processes. */
  readonly fair: boolean;
  /** Waits for permits (without limit unless `waitTime`); LockAcquireTimeoutError when it runs out. */
  acquire(options?: PermitOptions): Promise<Permit>;
  /** One attempt (or waits up to `waitTime`); null when no permits were had. */
  tryAcquire(options?: PermitOptions): Promise<Permit | null>;
  /** `acquire`, then `fn(permit)`, then release (also when fn throws). */
  withPermit<T>(fn: (permit: Permit) => T | Promise<T>, options?: PermitOptions): Promise<T>;
  /** The limit minus the unexpired permits out, from any client (at least 0). */
  availablePermits(): Promise<number>;
}

const SEMAPHORE_OPTIONS = ['permits', 'fair'];
const REQUEST_OPTIONS = ['permits', ...WAIT_OPTIONS];
/** Permit ids are numbered per process; with the client id they are unique everywhere. */
let lastPermit = 0;

/**
 * A counting semaphore: at most `permits` out at once across every client. Permits live in one
 * sorted set (id → lease end, server time) that every script prunes, so a dead holder's permits
 * come back when its lease ends. Whatever frees permits (a release, ended leases, a woken client
 * handing back what it cannot use) wakes waiting clients for every free permit not yet promised
 * to a woken one: one notice per client that can use them (non-fair), or the head of the queue
 * when its request fits (fair).
 */
export class Semaphore implements RSemaphore {
  readonly name: string;
  readonly permits: number;
  readonly fair: boolean;
  readonly #core: LockCore;
  readonly #keys: SemaphoreKeys;
  readonly #scripts: SynchronizerScripts;
  /** Its permits in the client's hold records. */
  readonly #lockId: string;

  constructor(core: LockCore, name: unknown, options: unknown) {
    this.name = checkLockName(name);
    if (options === undefined) throw new InvalidArgumentError('`options.permits` (the limit) is required', { lockName: this.name });
    const raw = checkOptions(options, SEMAPHORE_OPTIONS, this.name);
    this.permits = checkCount(raw.permits, 'permits', Number.MAX_SAFE_INTEGER, this.name);
    if (raw.fair !== undefined && typeof raw.fair !== 'boolean') {
      throw new InvalidArgumentError(`\`fair\` must be a boolean, got ${describe(raw.fair)}`, { lockName: this.name });
    }
    this.fair = raw.fair === true;
    this.#core = core;
    this.#keys = semaphoreKeys(core.keyPrefix, this.name);
    this.#scripts = core.scripts.synchronizers;
    this.#lockId = lockIdOf('permit', this.#keys.permits);
  }

  async tryAcquire(options?: PermitOptions): Promise<Permit | null> {
    const request = this.#check(options);
    return this.#acquire(request.need, request.waitMs ?? 0, request.leaseMs, request.signal, request.maxHoldMs);
  }

  async acquire(options?: PermitOptions): Promise<Permit> {
    const { need, waitMs, leaseMs, signal, maxHoldMs } = this.#check(options);
    const permit = await this.#acquire(need, waitMs, leaseMs, signal, maxHoldMs);
    if (permit) return permit;
    throw new LockAcquireTimeoutError(`timed out after ${waitMs} ms waiting for ${need} permit(s) of semaphore "${this.name}"`, waitMs ?? 0, {
      lockName: this.name,
    });
  }

  async withPermit<T>(fn: (permit: Permit) => T | Promise<T>, options?: PermitOptions): Promise<T> {
    const body = checkFunction<(permit: Permit) => T | Promise<T>>(fn, 'fn');
    this.#check(options);
    const permit = await this.acquire(options);
    let result: T;
    try {
      result = await body(permit);
    } catch (error) {
      await permit.release().catch((releaseError: unknown) => this.#core.events.emit('error', releaseError));
      throw error;
    }
    await permit.release();
    return result;
  }

  async availablePermits(): Promise<number> {
    await this.#open();
    return this.#scripts.available(this.#keys, this.permits);
  }

  #check(options: unknown): { need: number; waitMs: number | undefined; leaseMs: number; signal: AbortSignal | undefined; maxHoldMs?: number | undefined } {
    const { permits, ...wait } = checkOptions(options, REQUEST_OPTIONS, this.name);
    const need = permits === undefined ? 1 : checkCount(permits, 'permits', this.permits, this.name);
    return { need, ...checkWaitOptions(wait, this.name) };
  }

  async #open(): Promise<void> {
    this.#core.assertOpen();
    await this.#core.ready();
  }

  async #acquire(need: number, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined, maxHoldMs?: number): Promise<Permit | null> {
    await this.#open();
    signal?.throwIfAborted();
    const core = this.#core;
    // Telemetry's owner: the first attempt's permit id (each attempt sends one of its own).
    const owner = `${need}:${core.clientId}:${(lastPermit + 1).toString(36)}`;
    const track = new AcquireTrack(core.clientId, this.#lockId, this.name, owner, { server: core.redis.address, permits: need, signal });
    return track.around(() => this.#acquirePermit(need, waitMs, leaseMs, signal, maxHoldMs));
  }

  async #acquirePermit(need: number, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined, maxHoldMs: number | undefined): Promise<Permit | null> {
    const core = this.#core;
    const ttlMs = leaseMs === WATCHDOG_LEASE ? core.watchdogTimeoutMs : leaseMs;
    const deadline = waitMs === undefined ? Infinity : performance.now() + waitMs;
    for (;;) {
      // A fresh id per attempt: a permit given back as too late must not be confused with the next.
      lastPermit += 1;
      const id = `${need}:${core.clientId}:${lastPermit.toString(36)}`;
      const abandon = (): void => {
        this.#send(id).catch((error: unknown) => core.events.emit('error', error));
      };
      const left = waitMs === undefined ? undefined : Math.max(0, Math.ceil(deadline - performance.now()));
      const giveBack = (): Promise<number> => this.#send(id);
      const request: PermitRequest = { core, keys: this.#keys, limit: this.permits, need, id, ttlMs, waitMs: left, signal, abandon, giveBack };
      const acquired = this.fair ? await waitInTurn(request) : await waitForNotice(request);
      if (acquired === false) return null;
      // A grant answered after its lease ran out (by the holder's clock) may have expired in Redis
      // already, its permits out to others: give it back, and ask again within the wait.
      if (performance.now() < acquired.sentAt + ttlMs - holdDrift(ttlMs)) {
        if (core.syncReplicas) await confirmReplicas(core, this.name, this.#keys.permits, () => this.#send(id), abandon, 'semaphore');
        return this.#permit(id, need, acquired.sentAt, ttlMs, leaseMs === WATCHDOG_LEASE, maxHoldMs ?? core.maxHoldTimeMs);
      }
      abandon();
      if (left === 0 || performance.now() >= deadline) return null;
    }
  }

  /** Gives permit `id` back; 0 whether it was out or not (a release never fails for that). */
  async #send(id: string): Promise<number> {
    await this.#scripts.release(this.#keys, id, this.permits, this.#core.publish);
    return 0;
  }

  /** Records the permit under the holder's clock (and the watchdog) before user code runs. */
  #permit(id: string, need: number, sentAt: number, ttlMs: number, watchdog: boolean, maxHoldMs: number | undefined): Permit {
    const core = this.#core;
    const hold = core.holds.acquired({ kind: 'permit', lockId: this.#lockId, owner: id, target: this.#target(id), unscoped: false, sentAt, ttlMs, watchdog, permits: need });
    if (watchdog) core.watchdog.kick();
    capHold(core.holds, hold, maxHoldMs, this.#letGo(id));
    core.events.emit('acquired', { name: this.name, owner: id });
    return this.#permitOf(id, need, hold);
  }

  /** Permits by exact id, for `permit.handOff()` and `locks.adopt()` (see OwnerHolds). */
  [OWNER_CALLS](): OwnerHolds {
    const holds = this.#core.holds;
    const lockId = this.#lockId;
    return {
      core: this.#core,
      name: this.name,
      kind: 'permit',
      lockId,
      holdOf: (id) => {
        const hold = holds.get(lockId, id);
        return hold && holds.isCurrent(hold) ? hold : undefined;
      },
      target: (id) => this.#target(id),
      letGo: (id) => this.#letGo(id),
      lease: (id) => this.#permitOf(id, Number(id.split(':', 1)[0]), holds.get(lockId, id)!),
    };
  }

  /** How the watchdog renews permit `id`. */
  #target(id: string): RenewTarget {
    return { name: this.name, script: KINDS.permit.renew, keys: [this.#keys.permits], holder: id };
  }

  /** Gives permit `id` back in the background, nobody waiting (see Hold.letGo). */
  #letGo(id: string): (count: number) => void {
    return () => void this.#send(id).catch(() => undefined);
  }

  /** The Permit of `hold`: its signal follows the hold; release() gives the permits back once. */
  #permitOf(id: string, need: number, hold: Hold): Permit {
    const core = this.#core;
    const controller = new AbortController();
    addLease(hold, controller);
    const ticket: ReleaseTicket = {};
    return new Permit({
      id,
      name: this.name,
      permits: need,
      signal: controller.signal,
      moves: movesOf(core, hold, { kind: 'permit', name: this.name, permits: need, limit: this.permits, fair: this.fair }),
      release: async () => {
        removeLease(hold, controller);
        // Released already, or lost (the signal said so): nothing to give back.
        if (!core.holds.isCurrent(hold)) return;
        try {
          await traceRelease(core, this.name, id, hold.lockId, () => releaseHold(core, this.name, hold, (owner) => this.#send(owner), ticket));
        } catch (error) {
          // Not released (refused during a hand-off, or failed): the hold's loss or hand-off still concerns this Permit.
          addLease(hold, controller);
          throw error;
        }
      },
    });
  }
}
