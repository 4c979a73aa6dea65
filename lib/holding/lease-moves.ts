import { randomUUID } from 'node:crypto';
import type { LockContext } from '../context.js';
import { currentContext, ownerId } from '../context.js';
import type { LockCore } from '../core.js';
import { InvalidArgumentError, LockError, LockHandedOffError, LockLostError } from '../errors.js';
import { holdDrift, kindOf, type Hold } from './holds.js';
import type { ReleaseTicket } from './pending-release.js';
import { newRequestId } from './request-id.js';
import { NOT_HELD, OTHER_SIDE_HELD } from '../scripts/lease-move-scripts.js';
import { checkLeaseTime, checkObject, checkPositiveDuration, WATCHDOG_LEASE } from '../validate.js';
import type { LeaseHandle, LeaseHandleKind } from './lease-handle.js';

/** Options of `lease.handOff()`. */
export interface HandOffOptions {
  /**
   * Watchdog mode: how long the hold is kept for its adopter, ms. Nobody renews it between
   * `handOff()` and `adopt()`: a handle adopted later finds it gone (LockLostError).
   * A fixed-lease hold keeps its lease instead.
   * @default the client's `watchdogTimeout`
   */
  adoptWithin?: number;
}

/** What a Lease (or Permit) can do with its hold besides releasing it. */
export interface LeaseMoves {
  extend(ms: number): Promise<void>;
  handOff(options?: HandOffOptions): Promise<LeaseHandle>;
}

/** How one hold is described in a handle, beyond what the hold record knows. */
export interface HandleFacts {
  readonly kind: LeaseHandleKind;
  readonly name: string;
  readonly token?: number;
  readonly permits?: number;
  readonly limit?: number;
  readonly fair?: boolean;
}

/** A request id unique across clients: an adopted hold's records are shared by two processes. */
export function sharedRequestId(core: LockCore): string {
  return `${core.clientId}:${newRequestId()}`;
}

// Per lock context, the locks whose hold it handed off. Their owner id now belongs to the
// adopter: a lock call of the same context would re-enter the adopted hold from two processes.
const handedOff = new WeakMap<LockContext, Set<string>>();
/** Until the first hand-off in this process, acquisitions skip the look-up. */
let anyHandedOff = false;

/** Throws when the current context handed its hold of `lockId` off (see above). */
export function assertNotHandedOff(lockId: string, name: string): void {
  if (!anyHandedOff) return;
  const context = currentContext();
  if (context && handedOff.get(context)?.has(lockId)) {
    throw new LockHandedOffError(
      `this lock context handed its hold of "${name}" off to another process; take the lock again in a new context (locks.runInContext)`,
      { lockName: name },
    );
  }
}

/** `owner` (of client `clientId`) handed its hold of `lockId` off: if it is the current context's, that context may not take it again. */
export function markHandedOff(clientId: string, owner: string, lockId: string): void {
  const context = currentContext();
  if (!context || owner !== ownerId(clientId, context.id)) return;
  const locks = handedOff.get(context) ?? new Set<string>();
  locks.add(lockId);
  handedOff.set(context, locks);
  anyHandedOff = true;
}

function lostError(hold: Hold, why: string): LockLostError {
  return new LockLostError(`${kindOf(hold.target)} "${hold.target.name}" is no longer held: ${why}`, hold.watchdog ? 'deleted' : 'expired', {
    lockName: hold.target.name,
  });
}

/** The hold is no longer this client's to move: released, lost, handed off. */
function assertHeld(core: LockCore, hold: Hold): void {
  if (!core.holds.isCurrent(hold) || hold.count === 0 || hold.ending) throw lostError(hold, 'it was released, lost or handed off');
}

/** Redis said the holder holds nothing: the client's record ends with it. */
function lostInRedis(core: LockCore, hold: Hold): LockLostError {
  const error = lostError(hold, 'Redis no longer has it');
  core.holds.lose(hold, error.reason, error);
  return error;
}

/** `lease.extend(ms)`: a fixed lease now ends no earlier than `ms` from when Redis confirms it. */
export async function extendHold(core: LockCore, hold: Hold, ms: unknown): Promise<void> {
  const name = hold.target.name;
  if (ms === WATCHDOG_LEASE) throw new InvalidArgumentError('`ms` must be a lease of at least 50 ms, got -1', { lockName: name });
  const extendMs = checkLeaseTime(ms ?? Number.NaN, name);
  if (hold.watchdog) {
    throw new InvalidArgumentError(`${kindOf(hold.target)} "${name}" is held in watchdog mode: the watchdog keeps it, extend() is for a leaseTime`, {
      lockName: name,
    });
  }
  assertHeld(core, hold);
  core.assertOpen();
  const sentAt = performance.now();
  const extended = await core.scripts.leaseMoves.extend(hold.target, extendMs, sharedRequestId(core));
  if (!core.holds.isCurrent(hold)) throw lostError(hold, 'it ended while the extension was on its way');
  if (!extended) throw lostInRedis(core, hold);
  core.holds.confirmed(hold, sentAt, extendMs);
}

/**
 * `lease.handOff()`: opens a one-shot claim in Redis and keeps the hold for the adopter, then
 * gives the hold up here: no renewal, no clock, every Lease of it aborts with LockHandedOffError.
 * A failure leaves the hold as it was (still held and renewed here).
 */
export async function handOffHold(core: LockCore, hold: Hold, facts: HandleFacts, options: unknown): Promise<LeaseHandle> {
  const raw = checkObject(options, 'options');
  const keepMs = hold.watchdog ? (raw.adoptWithin === undefined ? core.watchdogTimeoutMs : checkPositiveDuration(raw.adoptWithin, 'adoptWithin')) : 0;
  assertHeld(core, hold);
  // A release on its way (or retried in the background) could land after the adopter took over.
  if (hold.releasing > 0 || hold.pending) {
    throw new LockError(`${kindOf(hold.target)} "${facts.name}" has a release under way: it cannot be handed off`, { lockName: facts.name });
  }
  core.assertOpen();
  const id = randomUUID();
  const wallAt = Date.now();
  const reply = await core.scripts.leaseMoves.handOff(hold.target, keepMs, id);
  if (!core.holds.isCurrent(hold)) throw lostError(hold, 'it ended while the hand-off was on its way');
  if (reply === NOT_HELD) throw lostInRedis(core, hold);
  if (reply === OTHER_SIDE_HELD) {
    throw new LockError(
      `the owner holds both sides of read-write lock "${facts.name}": hand off neither (the adopter would read while this process writes, or the reverse)`,
      { lockName: facts.name },
    );
  }
  if (typeof reply === 'number') throw new LockError(`unexpected reply ${reply} to the hand-off of "${facts.name}"`, { lockName: facts.name });
  // Given up here before the handle exists: nobody can adopt it while this process still believes.
  core.holds.end(hold);
  const error = new LockHandedOffError(`${kindOf(hold.target)} "${facts.name}" was handed off to another process`, { lockName: facts.name });
  for (const lease of hold.leases) lease.abort(error);
  markHandedOff(core.clientId, hold.owner, hold.lockId);
  return {
    rlock: 1,
    ...facts,
    keyPrefix: core.keyPrefix,
    owner: hold.owner,
    id,
    holdCount: reply.count,
    leaseTime: hold.watchdog ? WATCHDOG_LEASE : Math.ceil(reply.leftMs),
    // By this process's wall clock: the lease left, counted from before the call was sent, less the drift margin.
    expiresAt: Math.floor(wallAt + reply.leftMs - holdDrift(reply.leftMs)),
    token: reply.token ?? facts.token,
  };
}

/** The moves of one hold, for its Lease or Permit. */
export function movesOf(core: LockCore, hold: Hold | undefined, facts: HandleFacts): LeaseMoves {
  const missing = (): Promise<never> =>
    Promise.reject(new LockLostError(`"${facts.name}" is no longer held by this client`, 'expired', { lockName: facts.name }));
  if (!hold) return { extend: missing, handOff: missing };
  return {
    extend: (ms) => extendHold(core, hold, ms),
    handOff: (options) => handOffHold(core, hold, facts, options),
  };
}

/**
 * A release of every hold count, one release call at a time (an adopted hold may carry several).
 * A step that failed is retried with its own ticket, so Redis applies each step once.
 */
export function releaseWhole(release: (ticket: ReleaseTicket) => Promise<number>): (ticket: ReleaseTicket) => Promise<number> {
  let step: ReleaseTicket = {};
  return async () => {
    for (;;) {
      const left = await release(step);
      step = {};
      if (left <= 0) return left;
    }
  };
}
