import { channel } from 'node:diagnostics_channel';
import type { LockLostReason } from '../errors.js';
import type { Acquired } from '../waiting/wait.js';
import { reportedKindOf } from '../kinds.js';
import { diagnosticsChannels, type AcquireEndMessage, type AcquireOutcome, type AcquireStartMessage, type LostMessage, type ReleaseMessage, type RenewMessage } from './messages.js';
import { acquireTracing, isTraced, type AcquireTraceContext } from './tracing.js';

export { diagnosticsChannels } from './messages.js';
export type { AcquireEndMessage, AcquireOutcome, AcquireStartMessage, LockMessage, LostMessage, ReleaseMessage, RenewMessage } from './messages.js';

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
    return { name: this.#name, owner: this.#owner, clientId: this.#clientId, kind: reportedKindOf(this.#lockId) };
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
