import type { HoldDesk } from './hold-desk.js';
import { LockLostError, LockNotHeldError, LockRedisError, toLockError } from '../errors.js';
import { ScriptStatus, type HoldsLeft } from '../scripts/registry.js';
import type { Hold } from './holds.js';
import { PendingRelease, type ReleaseTicket } from './pending-release.js';
import { ClosedRequestError } from '../scripts/request-window.js';
import { RECORD_MAX_MS, RELEASE_TIMEOUT_MS } from '../options.js';
import { raceDeadline, TIMED_OUT } from '../waiting/wait.js';
import { holdEnded } from '../telemetry/hold-channels.js';

/** Sends one release call: the lock kind's script, with the request `pending` keeps. */
export type SendRelease = (owner: string, reExpireMs: number, pending: PendingRelease, recordMs: number) => Promise<HoldsLeft>;

export type { ReleaseTicket } from './pending-release.js';

/** First and last pause between background retries of a failed release, ms. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 1_000;

/**
 * How long a final release's record must answer a resend: until the holder's clock runs out
 * (after that the hold is given up either way), plus a second, within [1 s, RECORD_MAX_MS].
 */
function recordMsFor(hold: Hold): number {
  return Math.min(RECORD_MAX_MS, Math.max(1_000, Math.ceil(hold.validUntil - performance.now()) + 1_000));
}

/**
 * Releases one of `hold`'s holds: Redis' answer decides. When the call fails or gets no answer
 * in time (RELEASE_TIMEOUT_MS, or the holder's clock, whichever is first), the caller gets a
 * LockRedisError and the same request goes on being retried in the background until Redis
 * answers or the hold's lease is over; a last hold is no longer renewed meanwhile, so the lock is
 * free at the latest when its lease ends. A retry (`unlock()` again, or the same Lease's
 * `release()` again, `ticket`) sends that release's one request, so it is applied once, however
 * other releases of the owner fail and retry meanwhile. Resolves with the holds left.
 */
export function releaseHold(core: HoldDesk, name: string, hold: Hold, send: SendRelease, ticket?: ReleaseTicket): Promise<number> {
  const earlier = ticket ? ticket.pending : hold.unlockRetries?.[0];
  if (earlier !== undefined) return retryRelease(core, name, hold, send, earlier, ticket);
  // A Lease of an earlier hold of this owner, lost and let go of: the owner's hold now is another
  // record, not this Lease's to release.
  if (ticket?.of !== undefined && ticket.of !== hold) return Promise.reject(notHeld(name, hold));
  const pending = new PendingRelease(hold.watchdog ? core.watchdogTimeoutMs : 0, ticket === undefined);
  // Refused (before anything changes) while the hold is being handed off.
  const call = enterRelease(core, name, hold);
  if (ticket) ticket.pending = pending;
  (hold.releases ??= []).push(pending);
  // The last hold stops being renewed now: if the release never gets through, the lease ends.
  if (hold.count <= 1) core.holds.lastReleaseSent(hold);
  return attempt(core, name, hold, send, pending, call);
}

/** The answer a Lease's release got before, if it got one (its hold may be over since). */
export function answeredBefore(name: string, hold: Hold | undefined, ticket: ReleaseTicket | undefined): Promise<number> | undefined {
  const left = ticket?.pending?.left;
  if (left === undefined) return undefined;
  return left === ScriptStatus.NotHeld ? Promise.reject(notHeldOf(name, hold?.object ?? 'lock')) : Promise.resolve(left);
}

/** A release sent before, tried again: answered as it was, or its one request sent again. */
function retryRelease(core: HoldDesk, name: string, hold: Hold, send: SendRelease, pending: PendingRelease, ticket: ReleaseTicket | undefined): Promise<number> {
  if (pending.left !== undefined) return collect(core, name, hold, pending);
  // Its hold is gone (lost and let go of): resent now, it could take a count of the owner's next hold.
  if (ticket?.of !== undefined && ticket.of !== hold) return Promise.reject(notHeld(name, hold));
  // Retries stopped unanswered (the lease ran out, the client closed): its request may not be sent again.
  if (pending.done) return Promise.reject(notHeld(name, hold));
  return attempt(core, name, hold, send, pending, enterRelease(core, name, hold));
}

/** Hands over the answer a background retry got: applied then, told now. */
function collect(core: HoldDesk, name: string, hold: Hold, pending: PendingRelease): Promise<number> {
  forgetUnlockRetry(hold, pending);
  if (hold.state === 'released' && !(hold.releases?.length ?? 0) && !(hold.unlockRetries?.length ?? 0)) core.holds.end(hold);
  if (pending.left === ScriptStatus.NotHeld) return Promise.reject(notHeld(name, hold));
  return Promise.resolve(pending.left!);
}

/** `unlock()` again has nothing more to collect of `pending`. */
function forgetUnlockRetry(hold: Hold, pending: PendingRelease): void {
  const retries = hold.unlockRetries;
  const at = retries?.indexOf(pending) ?? -1;
  if (at >= 0) retries!.splice(at, 1);
}

/** The release counts as a call of the owner on the lock (hold-calls.ts); the key for `leave`. */
function enterRelease(core: HoldDesk, name: string, hold: Hold): string {
  return core.holds.calls.enter(hold.target.keys[0]!, hold.owner, name);
}

/** Sends the release; `call` (from enterRelease) is left once Redis answered it or it failed. */
function attempt(core: HoldDesk, name: string, hold: Hold, send: SendRelease, pending: PendingRelease, call: string): Promise<number> {
  hold.releasing += 1;
  let sent: Promise<HoldsLeft>;
  try {
    sent = send(hold.owner, pending.reExpireMs, pending, recordMsFor(hold));
  } catch (error) {
    // As a call that failed: answered below, retried in the background.
    sent = Promise.reject(error);
  }
  const deadline = Math.min(performance.now() + RELEASE_TIMEOUT_MS, hold.validUntil);
  return raceDeadline(sent, deadline).then(
    (left) => {
      if (left === TIMED_OUT) {
        // Still out: a hand-off must wait until Redis answered it.
        const answeredLate = (): void => answered(core, hold, call);
        sent.then(answeredLate, answeredLate);
        const what = `${hold.object} "${name}"`;
        const error = new LockRedisError(`release of ${what} got no answer in time; it is retried in the background`, 'release', { lockName: name });
        return failed(core, name, hold, send, pending, sent, error);
      }
      answered(core, hold, call);
      // A background retry of the same request got the answer first: told as it was.
      if (pending.left !== undefined) return collect(core, name, hold, pending);
      pending.left = left;
      finishRelease(hold, pending);
      if (pending.unticketed && pending.retried) forgetUnlockRetry(hold, pending);
      // A LockNotHeldError from here is Redis' answer: nothing to retry.
      return settle(core, name, hold, left);
    },
    (error: unknown) => {
      answered(core, hold, call);
      return failed(core, name, hold, send, pending, sent, error);
    },
  );
}

/** Redis answered the release sent as `call`, or it failed: it is out no more. */
function answered(core: HoldDesk, hold: Hold, call: string): void {
  hold.releasing -= 1;
  core.holds.calls.leave(call);
}

/** `pending` is sent no more: its request is closed, and the owner's acquisitions stop waiting for it. */
function finishRelease(hold: Hold, pending: PendingRelease): void {
  if (!pending.finish()) return;
  const releases = hold.releases;
  const at = releases?.indexOf(pending) ?? -1;
  if (at >= 0) releases!.splice(at, 1);
}

/** The release got no answer (an error, or none in time): the same request goes on in the background, once. */
function failed(core: HoldDesk, name: string, hold: Hold, send: SendRelease, pending: PendingRelease, call: Promise<HoldsLeft>, error: unknown): never {
  if (!pending.retried && !pending.done) {
    pending.retried = true;
    if (pending.unticketed) (hold.unlockRetries ??= []).push(pending);
    void finishInBackground(core, name, hold, send, pending, call);
  }
  throw toLockError(error, 'release', name, hold.object);
}

function notHeld(name: string, hold: Hold): LockNotHeldError {
  return notHeldOf(name, hold.object);
}

function notHeldOf(name: string, object: string): LockNotHeldError {
  return new LockNotHeldError(`${object} "${name}" is not held by the current owner`, { lockName: name });
}

/** Applies Redis' answer to the client's record of the hold. */
function settle(core: HoldDesk, name: string, hold: Hold, left: HoldsLeft): number {
  const { holds } = core;
  if (left === ScriptStatus.NotHeld) {
    if (hold.count > 1 && holds.isCurrent(hold)) {
      // Nested holds are left that the owner still believes in: they are gone too, so say so
      // (their Leases abort, \`lost\` is emitted), as the watchdog or the clock would have.
      const reason = hold.watchdog ? 'deleted' : 'expired';
      const message = `${hold.object} "${name}" was lost (${reason}): a release found it no longer held`;
      holds.lose(hold, reason, new LockLostError(message, reason, { lockName: name }));
    } else {
      holds.end(hold);
    }
    throw notHeld(name, hold);
  }
  if (!holds.isCurrent(hold)) return left;
  holds.answered(hold, left);
  if (left === 0) {
    // Another release of the hold still waits for its answer (Redis applied it, or this one would
    // not have freed the lock): the record stays (`released`) so that its retry is answered and the
    // owner's next acquisition waits for it; it ends once collected, or with its lease.
    if (!(hold.releases?.length ?? 0) && !(hold.unlockRetries?.length ?? 0)) holds.end(hold);
    if (!hold.quiet) core.events.emit('released', { name, owner: hold.owner, heldMs: performance.now() - hold.since });
  }
  // Holds left in Redis while the client counted none (an acquisition of the owner that came in
  // meanwhile makes it `held` again): nobody holds them, so they are not renewed; they end with their
  // lease. Renewing them would keep the lock taken for as long as the process lives.
  return left;
}

/** Retries a failed release with the same request until Redis answers or the lease is over. */
async function finishInBackground(
  core: HoldDesk,
  name: string,
  hold: Hold,
  send: SendRelease,
  pending: PendingRelease,
  first: Promise<HoldsLeft>,
): Promise<void> {
  try {
    await retryUntilAnswered(core, name, hold, send, pending, first);
  } finally {
    finishRelease(hold, pending);
  }
}

/** `call`'s answer, or TIMED_OUT once the hold's lease is over (a call waiting for room may wait long). */
async function answerInLease(call: Promise<HoldsLeft>, hold: Hold): Promise<HoldsLeft | typeof TIMED_OUT> {
  for (;;) {
    const left = await raceDeadline(call, hold.validUntil);
    if (left !== TIMED_OUT || performance.now() >= hold.validUntil) return left;
  }
}

async function retryUntilAnswered(core: HoldDesk, name: string, hold: Hold, send: SendRelease, pending: PendingRelease, first: Promise<HoldsLeft>): Promise<void> {
  let call = first;
  let pauseMs = RETRY_FIRST_MS;
  for (;;) {
    try {
      const left = await answerInLease(call, hold);
      if (left === TIMED_OUT) return;
      // A foreground try of the same request got the answer first.
      if (pending.left !== undefined) return;
      pending.left = left;
      // Another release's answer freed the lock already: this older answer changes no count.
      if (!core.holds.isCurrent(hold) || hold.state === 'released') return;
      // Kept (`released`, count 0) until its lease is over or a retried release collects the answer.
      core.holds.answered(hold, left === ScriptStatus.NotHeld ? 0 : left);
      // Holds left that the client did not count are not renewed (see settle).
      if (left === 0 && !hold.quiet) {
        // Released now, though the record is kept until its lease is over (see above).
        holdEnded(core.clientId, hold, undefined);
        core.events.emit('released', { name, owner: hold.owner, heldMs: performance.now() - hold.since });
      }
      return;
    } catch (error) {
      // Its request was closed while it waited for room: it was never sent.
      if (error instanceof ClosedRequestError) return;
      // Reported once, to the caller; the lease bounds the retries.
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs).unref());
    pauseMs = Math.min(pauseMs * 2, RETRY_MAX_MS);
    if (pending.left !== undefined || pending.done || !core.holds.isCurrent(hold) || performance.now() >= hold.validUntil) return;
    try {
      core.assertOpen();
      call = send(hold.owner, pending.reExpireMs, pending, recordMsFor(hold));
    } catch {
      return;
    }
  }
}
