import type { LockLostReason } from '../errors.js';

// The channel names and the messages published on them: a module of its own, so that the
// channels and the tracing channels, which both speak of them, do not import each other.

/**
 * The `node:diagnostics_channel` names rlock publishes lock life events on. Subscribe with
 * `diagnostics_channel.subscribe(name, fn)`: no dependency, and nothing is built or sent while
 * nobody subscribes. Every message names the lock, the owner and the `LockClient.id`.
 *
 * @example
 * import { subscribe } from 'node:diagnostics_channel';
 * subscribe(diagnosticsChannels.acquireEnd, (m) => {
 *   const { name, acquired, waitMs } = m as AcquireEndMessage;
 *   if (acquired) waitHistogram.record(waitMs, { lock: name });
 * });
 */
export const diagnosticsChannels = {
  /** An acquisition (lock, tryLock, acquire, withLock, a MultiLock's member) starts: {@link AcquireStartMessage}. */
  acquireStart: 'rlock:acquire:start',
  /** It ended: acquired, gave up when its wait ran out, or failed: {@link AcquireEndMessage}. */
  acquireEnd: 'rlock:acquire:end',
  /** An owner's last hold was released (the `released` event): {@link ReleaseMessage}. */
  release: 'rlock:release',
  /** A held lock was lost (the `lost` event): {@link LostMessage}. */
  lost: 'rlock:lost',
  /** The watchdog renewed a hold (the `renewed` event): {@link RenewMessage}. */
  renew: 'rlock:renew',
  /** A renewal call for a hold failed (it is retried soon): {@link RenewFailureMessage}. */
  renewFailure: 'rlock:renew:failure',
  /** An owner's first hold of a lock (or a semaphore's permits) was confirmed: {@link HoldStartMessage}. */
  holdStart: 'rlock:hold:start',
  /** That hold ended: released, lost, or its client closed: {@link HoldEndMessage}. */
  holdEnd: 'rlock:hold:end',
} as const;

/** How an acquisition ended. */
export type AcquireOutcome = 'acquired' | 'timeout' | 'aborted' | 'error';

/** What every rlock diagnostics message carries. */
export interface LockMessage {
  /** The lock's name. */
  readonly name: string;
  /** The owner id: `${clientId}:${contextId}`. */
  readonly owner: string;
  /** The `LockClient.id` of the client the lock belongs to. */
  readonly clientId: string;
}

/** `rlock:acquire:start`. */
export interface AcquireStartMessage extends LockMessage {
  /** `lock`, `fenced`, `fair-lock`, `read`, `write` or `semaphore`. */
  readonly kind: string;
}

/** `rlock:acquire:end`. */
export interface AcquireEndMessage extends AcquireStartMessage {
  /** False when the wait ran out (tryLock resolved false, acquire threw LockAcquireTimeoutError) or the call failed. */
  readonly acquired: boolean;
  /** `acquired`, `timeout` (the wait ran out), `aborted` (by the call's signal) or `error`. */
  readonly outcome: AcquireOutcome;
  /** ms from the call to the outcome. */
  readonly waitMs: number;
  /** Attempts sent to Redis (1 when it was free); undefined when not acquired. */
  readonly attempts: number | undefined;
  /** The error the acquisition failed with (a Redis error, an abort), if it failed. */
  readonly error?: unknown;
}

/** `rlock:release`. */
export interface ReleaseMessage extends LockMessage {
  /** ms the owner held the lock, from its first acquisition to its last release (undefined for a RedLock). */
  readonly heldMs: number | undefined;
}

/** `rlock:lost`. */
export interface LostMessage extends LockMessage {
  /** Why it was lost: `deleted`, `taken`, `expired` (the holder's clock ran out), `quorum` (a RedLock), `max-hold-time`, `stalled` (renewalThread). */
  readonly reason: LockLostReason;
}

/** `rlock:renew`. */
export type RenewMessage = LockMessage;
