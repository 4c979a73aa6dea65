import { channel } from 'node:diagnostics_channel';
import { diagnosticsChannels, type LockMessage } from './messages.js';
import { reportedKindOf } from '../kinds.js';

/** `rlock:hold:start`: an owner's first hold of a lock (re-entries are not new holds), or a Permit. */
export interface HoldStartMessage extends LockMessage {
  /** The lock kind, as on `rlock:acquire:start` (`semaphore` for a Permit). */
  readonly kind: string;
  /** Permits the hold is (a Permit's count; 1 for a lock). */
  readonly permits: number;
}

/** `rlock:hold:end`: the hold that `rlock:hold:start` announced ended. */
export interface HoldEndMessage extends HoldStartMessage {
  /** ms from the hold's first acquisition. */
  readonly heldMs: number;
  /** `released`, a loss (`deleted`, `taken`, `expired`, …, as on `rlock:lost`), or `closed` (its client closed). */
  readonly reason: string;
}

/** `rlock:renew:failure`: the watchdog's renewal call for this hold failed; it is retried soon. */
export interface RenewFailureMessage extends LockMessage {
  /** The lock kind, as on `rlock:hold:start`. */
  readonly kind: string;
  /** What the call failed with. */
  readonly error: unknown;
}

/** What these messages read of a hold record (structural, so holds.ts and this file do not import each other). */
export interface AnnouncedHold {
  readonly lockId: string;
  readonly owner: string;
  readonly target: { readonly name: string };
  readonly since: number;
  readonly quiet: boolean;
  /** Permits the hold is: a Permit's count, 1 for a lock. */
  readonly permits: number;
  /** Its start was published: only then is its end (so subscribers can pair them). */
  announced: boolean;
}

const holdStart = channel(diagnosticsChannels.holdStart);
const holdEnd = channel(diagnosticsChannels.holdEnd);
const renewFailure = channel(diagnosticsChannels.renewFailure);

function base(clientId: string, hold: AnnouncedHold): HoldStartMessage {
  return { name: hold.target.name, owner: hold.owner, clientId, kind: reportedKindOf(hold.lockId), permits: hold.permits };
}

/** Publishes `rlock:hold:start` for a new hold, if someone subscribes (a RedLock's node holds are not holds of their own). */
export function holdStarted(clientId: string, hold: AnnouncedHold): void {
  if (hold.quiet || !holdStart.hasSubscribers) return;
  hold.announced = true;
  holdStart.publish(base(clientId, hold));
}

/** Publishes `rlock:hold:end` once for a hold whose start was published; `reason` undefined: released. */
export function holdEnded(clientId: string, hold: AnnouncedHold, reason: string | undefined): void {
  if (!hold.announced) return;
  hold.announced = false;
  if (!holdEnd.hasSubscribers) return;
  holdEnd.publish({ ...base(clientId, hold), heldMs: performance.now() - hold.since, reason: reason ?? 'released' } satisfies HoldEndMessage);
}

/** Publishes `rlock:renew:failure` for each hold of a renewal call that failed, if someone subscribes. */
export function renewFailed(clientId: string, batch: readonly AnnouncedHold[], error: unknown): void {
  if (!renewFailure.hasSubscribers) return;
  for (const hold of batch) {
    if (!hold.quiet) renewFailure.publish({ name: hold.target.name, owner: hold.owner, clientId, kind: reportedKindOf(hold.lockId), error } satisfies RenewFailureMessage);
  }
}
