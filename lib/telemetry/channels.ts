import { channel } from 'node:diagnostics_channel';
import type { LockLostReason } from '../errors.js';
import type { Acquired } from '../wait.js';

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
} as const;

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
  /** `lock`, `fenced`, `fair-lock`, `read` or `write`. */
  readonly kind: string;
}

/** `rlock:acquire:end`. */
export interface AcquireEndMessage extends AcquireStartMessage {
  /** False when the wait ran out (tryLock resolved false, acquire threw LockAcquireTimeoutError) or the call failed. */
  readonly acquired: boolean;
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
  /** Why it was lost: `deleted`, `taken`, `expired` (the holder's clock ran out), `quorum` (a RedLock), `max-hold-time`. */
  readonly reason: LockLostReason;
}

/** `rlock:renew`. */
export type RenewMessage = LockMessage;

const acquireStart = channel(diagnosticsChannels.acquireStart);
const acquireEnd = channel(diagnosticsChannels.acquireEnd);
const eventChannels = {
  released: channel(diagnosticsChannels.release),
  lost: channel(diagnosticsChannels.lost),
  renewed: channel(diagnosticsChannels.renew),
} as const;

/** The payload of the `acquired` event. */
export interface AcquiredPayload {
  readonly name: string;
  readonly owner: string;
  readonly waitMs: number;
  readonly attempts: number;
}

/**
 * One acquisition, from its start to its outcome: publishes `rlock:acquire:start` and
 * `rlock:acquire:end` when someone subscribes, and times the wait for the `acquired` event.
 */
export class AcquireTrack {
  readonly #started = performance.now();
  readonly #clientId: string;
  readonly #lockId: string;
  readonly #name: string;
  readonly #owner: string;
  /** Attempts of the acquisition calls that acquired (a late one included). */
  #attempts = 0;

  /** `lockId`: `${kind}\0${lock key}`, as the lock kinds name their holds. */
  constructor(clientId: string, lockId: string, name: string, owner: string) {
    this.#clientId = clientId;
    this.#lockId = lockId;
    this.#name = name;
    this.#owner = owner;
    if (acquireStart.hasSubscribers) acquireStart.publish(this.#message());
  }

  /**
   * Counts the attempts of one acquisition call that acquired (there may be several: an answer
   * that came after its lease ran out is let go and asked again).
   */
  attempted(acquired: Acquired): void {
    this.#attempts += acquired.attempts ?? 1;
  }

  /** An acquisition call failed with `error`: publishes its end; returns the error. */
  failed(error: unknown): unknown {
    this.#end(false, undefined, error);
    return error;
  }

  /** The acquisition gave up (its wait ran out, or a call acquired too late): publishes its end. */
  gaveUp(): false {
    this.#end(false, undefined);
    return false;
  }

  /** The `acquired` event's payload; publishes the end of the acquisition. */
  acquired(): AcquiredPayload {
    const attempts = Math.max(1, this.#attempts);
    const waitMs = performance.now() - this.#started;
    this.#end(true, attempts, undefined, waitMs);
    return { name: this.#name, owner: this.#owner, waitMs, attempts };
  }

  #end(acquired: boolean, attempts: number | undefined, error?: unknown, waitMs = performance.now() - this.#started): void {
    if (!acquireEnd.hasSubscribers) return;
    const message: AcquireEndMessage = { ...this.#message(), acquired, waitMs, attempts };
    acquireEnd.publish(error === undefined ? message : { ...message, error });
  }

  #message(): AcquireStartMessage {
    const kind = this.#lockId.slice(0, this.#lockId.indexOf('\u0000'));
    return { name: this.#name, owner: this.#owner, clientId: this.#clientId, kind };
  }
}

/** Publishes a client event (`released`, `lost`, `renewed`) on its channel, if someone subscribes. */
export function publishLockEvent(clientId: string, event: string, payload: unknown): void {
  const target = eventChannels[event as keyof typeof eventChannels];
  if (target === undefined || !target.hasSubscribers) return;
  const info = payload as { readonly name: string; readonly owner: string; readonly reason?: LockLostReason; readonly heldMs?: number };
  const base = { name: info.name, owner: info.owner, clientId };
  if (event === 'released') target.publish({ ...base, heldMs: info.heldMs } satisfies ReleaseMessage);
  else if (event === 'lost') target.publish({ ...base, reason: info.reason! } satisfies LostMessage);
  else target.publish(base satisfies RenewMessage);
}
