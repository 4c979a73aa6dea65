import { randomUUID } from 'node:crypto';
import type { LeaseDesk } from './lease-desk.js';
import { InvalidArgumentError, LockError, LockHandedOffError, LockLostError } from '../errors.js';
import { holdDrift, type Hold } from '../holding/holds.js';
import type { ReleaseTicket } from '../holding/pending-release.js';
import { ScriptStatus } from '../scripts/registry.js';
import { checkLeaseTime, checkObject, checkPositiveDuration, WATCHDOG_LEASE } from '../validate.js';
import type { LeaseHandle, LeaseHandleKind } from './lease-handle.js';

/** Options of `lease.handOff()`. */
export interface HandOffOptions {
  /**
   * Watchdog mode: how long the hold is kept for its adopter, ms from the hand-off — exactly, so
   * sooner or later than its current lease would end. Nobody renews it between `handOff()` and
   * `adopt()`: unadopted, the lock is free after this; a handle adopted later finds it gone
   * (LockLostError). A fixed-lease hold keeps its lease instead.
   * @default the client's `watchdogTimeout`
   */
  adoptWithin?: number;
}

/**
 * A hand-off checked and reserved, not yet sent: the owner's other calls on the lock are refused
 * until it settles. A MultiLock reserves every member's before it sends any (combine-leases.ts).
 */
export interface HandOffReservation {
  /** Sends it; the reservation ends when it settled. */
  send(): Promise<LeaseHandle>;
  /** Ends the reservation without sending it. */
  cancel(): void;
}

/** What a Lease (or Permit) can do with its hold besides releasing it. */
export interface LeaseMoves {
  extend(ms: number): Promise<void>;
  handOff(options?: HandOffOptions): Promise<LeaseHandle>;
  /** Checks and reserves the hand-off now (synchronously), to send it later. */
  reserveHandOff(options?: HandOffOptions): HandOffReservation;
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

function lostError(hold: Hold, why: string): LockLostError {
  return new LockLostError(`${hold.object} "${hold.target.name}" is no longer held: ${why}`, hold.watchdog ? 'deleted' : 'expired', {
    lockName: hold.target.name,
  });
}

/** The hold is no longer this client's to move: released, lost, handed off. */
function assertHeld(core: LeaseDesk, hold: Hold): void {
  if (!core.holds.isCurrent(hold) || !hold.held) throw lostError(hold, 'it was released, lost or handed off');
}

/** Redis said the holder holds nothing: the client's record ends with it. */
function lostInRedis(core: LeaseDesk, hold: Hold): LockLostError {
  const error = lostError(hold, 'Redis no longer has it');
  core.holds.lose(hold, error.reason, error);
  return error;
}

/** `lease.extend(ms)`: a fixed lease now ends no earlier than `ms` from when Redis confirms it. */
export async function extendHold(core: LeaseDesk, hold: Hold, ms: unknown): Promise<void> {
  const name = hold.target.name;
  if (ms === WATCHDOG_LEASE) throw new InvalidArgumentError('`ms` must be a lease of at least 50 ms, got -1', { lockName: name });
  const extendMs = checkLeaseTime(ms ?? Number.NaN, name);
  if (hold.watchdog) {
    throw new InvalidArgumentError(`${hold.object} "${name}" is held in watchdog mode: the watchdog keeps it, extend() is for a leaseTime`, {
      lockName: name,
    });
  }
  assertHeld(core, hold);
  core.assertOpen();
  // A call of the owner on the lock until answered: refused during a hand-off, and refuses one.
  const call = core.holds.calls.enter(hold.target.keys[0]!, hold.owner, name);
  let extended: boolean;
  const sentAt = performance.now();
  try {
    extended = await core.scripts.requests.send(hold.target.keys[0]!, hold.owner, (request) => core.scripts.leaseMoves.extend(hold.target, extendMs, request));
  } finally {
    core.holds.calls.leave(call);
  }
  if (!core.holds.isCurrent(hold)) throw lostError(hold, 'it ended while the extension was on its way');
  if (!extended) throw lostInRedis(core, hold);
  core.holds.confirmed(hold, sentAt, extendMs);
}

/**
 * `lease.handOff()`, checked and reserved now (see HandOffReservation): the hold must be held here,
 * with no release retried in the background and no other call of its owner on the lock under way
 * (hold-calls.ts). Sent, it opens a one-shot claim in Redis and keeps the hold for the adopter
 * (watchdog mode: `adoptWithin` from the hand-off, no more, no less), then gives the hold up here:
 * no renewal, no clock, every Lease of it aborts with LockHandedOffError, and the owner's context
 * may not call on the lock again. A failure leaves the hold as it was (still held and renewed here).
 */
export function reserveHandOff(core: LeaseDesk, hold: Hold, facts: HandleFacts, options: unknown): HandOffReservation {
  const raw = checkObject(options, 'options');
  const keepMs = hold.watchdog ? (raw.adoptWithin === undefined ? core.watchdogTimeoutMs : checkPositiveDuration(raw.adoptWithin, 'adoptWithin')) : 0;
  assertHeld(core, hold);
  const what = `${hold.object} "${facts.name}"`;
  // A release retried in the background could land after the adopter took over.
  if (hold.releases?.some((release) => release.retried)) throw new LockError(`${what} has a release under way: it cannot be handed off`, { lockName: facts.name });
  core.assertOpen();
  const call = core.holds.calls.enterHandOff(hold.target.keys[0]!, hold.owner, what, facts.name);
  let open = true;
  const leave = (): void => {
    if (open) core.holds.calls.leaveHandOff(call);
    open = false;
  };
  return {
    send: async () => {
      try {
        return await sendHandOff(core, hold, facts, keepMs);
      } finally {
        leave();
      }
    },
    cancel: leave,
  };
}

/** `lease.handOff()` at once (see reserveHandOff). */
export function handOffHold(core: LeaseDesk, hold: Hold, facts: HandleFacts, options: unknown): Promise<LeaseHandle> {
  try {
    return reserveHandOff(core, hold, facts, options).send();
  } catch (error) {
    return Promise.reject(error);
  }
}

async function sendHandOff(core: LeaseDesk, hold: Hold, facts: HandleFacts, keepMs: number): Promise<LeaseHandle> {
  const id = randomUUID();
  const wallAt = Date.now();
  const reply = await core.scripts.leaseMoves.handOff(hold.target, keepMs, id);
  if (!core.holds.isCurrent(hold)) throw lostError(hold, 'it ended while the hand-off was on its way');
  if (reply === ScriptStatus.NotHeld) throw lostInRedis(core, hold);
  if (reply === ScriptStatus.OtherSideHeld) {
    throw new LockError(
      `the owner holds both sides of read-write lock "${facts.name}": hand off neither (the adopter would read while this process writes, or the reverse)`,
      { lockName: facts.name },
    );
  }
  if (typeof reply !== 'object') throw new LockError(`unexpected reply ${reply} to the hand-off of "${facts.name}"`, { lockName: facts.name });
  // Given up here before the handle exists: nobody can adopt it while this process still believes.
  core.holds.end(hold);
  const error = new LockHandedOffError(`${hold.object} "${facts.name}" was handed off to another process`, { lockName: facts.name });
  for (const lease of hold.leases) lease.abort(error);
  core.holds.calls.markHandedOff(hold.context, hold.target.keys[0]!);
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
export function movesOf(core: LeaseDesk, hold: Hold | undefined, facts: HandleFacts): LeaseMoves {
  const missing = (): Promise<never> =>
    Promise.reject(new LockLostError(`"${facts.name}" is no longer held by this client`, 'expired', { lockName: facts.name }));
  if (!hold) {
    return {
      extend: missing,
      handOff: missing,
      reserveHandOff: () => ({ send: missing, cancel: () => undefined }),
    };
  }
  return {
    extend: (ms) => extendHold(core, hold, ms),
    handOff: (options) => handOffHold(core, hold, facts, options),
    reserveHandOff: (options) => reserveHandOff(core, hold, facts, options),
  };
}

/**
 * A release of every hold count, one release call at a time (an adopted hold may carry several).
 * A step that failed is retried with its own ticket, so Redis applies each step once.
 */
export function releaseWhole(release: (ticket: ReleaseTicket) => Promise<number>): (ticket: ReleaseTicket) => Promise<number> {
  let step: ReleaseTicket | undefined;
  return async (ticket) => {
    // Every step is bound to the Lease's hold record, as the Lease's own ticket is.
    step ??= { of: ticket.of };
    for (;;) {
      const left = await release(step);
      step = { of: ticket.of };
      if (left <= 0) return left;
    }
  };
}
