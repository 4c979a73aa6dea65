import { channel } from 'node:diagnostics_channel';
import type { LockLostReason } from '../errors.js';
import type { Acquired } from '../waiting/wait.js';
import { kindOfLockId } from './lock-kind.js';
import { acquireTracing, isTraced, type AcquireTraceContext } from './tracing.js';

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
  readonly #scope: AcquireScope;
  /** Attempts of the acquisition calls that acquired (a late one included). */
  #attempts = 0;
  /** The `tracing:rlock:acquire` context, when the acquisition runs traced. */
  #trace: AcquireTraceContext | undefined;

  /** `lockId`: `${kind}\0${lock key}`, as the lock kinds name their holds. */
  constructor(clientId: string, lockId: string, name: string, owner: string, scope: AcquireScope = {}) {
    this.#clientId = clientId;
    this.#lockId = lockId;
    this.#name = name;
    this.#owner = owner;
    this.#scope = scope;
    if (acquireStart.hasSubscribers) acquireStart.publish(this.#message());
  }

  /**
   * Runs the acquisition `fn` inside `tracing:rlock:acquire` (start, end, asyncStart, asyncEnd,
   * error) when someone subscribes there, so that tracers see it in the caller's async context;
   * otherwise just calls it.
   */
  run<T>(fn: () => Promise<T>): Promise<T> {
    if (!isTraced(acquireTracing)) return fn();
    const { server, permits } = this.#scope;
    this.#trace = { ...this.#message(), server, permits };
    return acquireTracing.tracePromise(fn, this.#trace);
  }

  /**
   * Runs `acquire` (a semaphore request: its value, or null when the wait ran out) as this
   * acquisition: its outcome is published, and it is traced when someone subscribes.
   */
  around<T>(acquire: () => Promise<T | null>): Promise<T | null> {
    return this.run(async () => {
      let result: T | null;
      try {
        result = await acquire();
      } catch (error) {
        throw this.failed(error);
      }
      this.#end(result === null ? 'timeout' : 'acquired', undefined);
      return result;
    });
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
    const signal = this.#scope.signal;
    this.#end(signal?.aborted && error === signal.reason ? 'aborted' : 'error', undefined, error);
    return error;
  }

  /** The acquisition gave up (its wait ran out, or a call acquired too late): publishes its end. */
  gaveUp(): false {
    this.#end('timeout', undefined);
    return false;
  }

  /** The `acquired` event's payload; publishes the end of the acquisition. */
  acquired(): AcquiredPayload {
    const attempts = Math.max(1, this.#attempts);
    const waitMs = performance.now() - this.#started;
    this.#end('acquired', attempts, undefined, waitMs);
    return { name: this.#name, owner: this.#owner, waitMs, attempts };
  }

  #end(outcome: AcquireOutcome, attempts: number | undefined, error?: unknown, waitMs = performance.now() - this.#started): void {
    if (this.#trace) Object.assign(this.#trace, { outcome, waitMs, attempts });
    if (!acquireEnd.hasSubscribers) return;
    const message: AcquireEndMessage = { ...this.#message(), acquired: outcome === 'acquired', outcome, waitMs, attempts };
    acquireEnd.publish(error === undefined ? message : { ...message, error });
  }

  #message(): AcquireStartMessage {
    return { name: this.#name, owner: this.#owner, clientId: this.#clientId, kind: kindOfLockId(this.#lockId) };
  }
}

/** What an acquisition's telemetry knows beyond the lock: where, how many permits, its signal. */
export interface AcquireScope {
  /** The server (`host:port`) of a connection to one server. */
  readonly server?: string | undefined;
  /** A semaphore request's permits. */
  readonly permits?: number;
  /** The call's signal: an error that is its reason is an abort. */
  readonly signal?: AbortSignal | undefined;
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
