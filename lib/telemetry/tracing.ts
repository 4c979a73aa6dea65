import { tracingChannel, type TracingChannel } from 'node:diagnostics_channel';
import { reportedKindOf } from '../kinds.js';
import type { AcquireOutcome, AcquireStartMessage, LockMessage } from './messages.js';

/**
 * rlock's `TracingChannel`s (`node:diagnostics_channel`): each call is published as
 * `tracing:<name>:start`, `:end`, `:asyncStart`, `:asyncEnd` and `:error`, with one context
 * object per call, in the caller's async context. APM agents bind their stores to `start` and so
 * see rlock's Redis calls inside the operation; nothing is built while nobody subscribes.
 *
 * @example
 * import { tracingChannel } from 'node:diagnostics_channel';
 * tracingChannel(tracingChannels.acquire).subscribe({
 *   start(ctx) { … }, asyncEnd(ctx) { const { outcome, waitMs } = ctx as AcquireTraceContext; … },
 *   end() {}, asyncStart() {}, error() {},
 * });
 */
export const tracingChannels = {
  /** One acquisition, its wait included: {@link AcquireTraceContext}. */
  acquire: 'rlock:acquire',
  /** One release call (unlock, a Lease's or a Permit's release): {@link ReleaseTraceContext}. */
  release: 'rlock:release',
} as const;

/** The context of a `tracing:rlock:acquire` call; the end fields are set before `asyncEnd`. */
export interface AcquireTraceContext extends AcquireStartMessage {
  /** `host:port` of the server, on a connection to one server (undefined on a Cluster or Sentinel). */
  readonly server: string | undefined;
  /** A semaphore request's permits (undefined for locks). */
  readonly permits: number | undefined;
  /** How it ended (set at the end; undefined when it failed before its first attempt). */
  outcome?: AcquireOutcome;
  /** ms from the call to the outcome. */
  waitMs?: number;
  /** Attempts sent to Redis; undefined unless acquired. */
  attempts?: number | undefined;
  /** Set by the TracingChannel: what the acquisition resolved with. */
  result?: unknown;
  /** Set by the TracingChannel: what it rejected with. */
  error?: unknown;
}

/** The context of a `tracing:rlock:release` call. */
export interface ReleaseTraceContext extends LockMessage {
  /** The lock kind, as on `rlock:acquire:start`. */
  readonly kind: string;
  /** `host:port` of the server, on a connection to one server. */
  readonly server: string | undefined;
  /** Set by the TracingChannel: what the release resolved with. */
  result?: unknown;
  /** Set by the TracingChannel: what it rejected with. */
  error?: unknown;
}

export const acquireTracing: TracingChannel<unknown, AcquireTraceContext> = tracingChannel(tracingChannels.acquire);
const releaseTracing: TracingChannel<unknown, ReleaseTraceContext> = tracingChannel(tracingChannels.release);

/** Whether anyone subscribes to one of the channel's five events (TracingChannel#hasSubscribers is newer than Node 20.0). */
export function isTraced(target: TracingChannel<unknown, object>): boolean {
  return (
    target.start.hasSubscribers ||
    target.end.hasSubscribers ||
    target.asyncStart.hasSubscribers ||
    target.asyncEnd.hasSubscribers ||
    target.error.hasSubscribers
  );
}

/** Who releases what, for `tracing:rlock:release`. */
export interface ReleaseScope {
  readonly clientId: string;
  readonly redis: { readonly address: string | undefined };
}

/** Whether a release would be traced now: a caller that knows it is not calls the release itself, with no closure for traceRelease. */
export function isReleaseTraced(): boolean {
  return isTraced(releaseTracing);
}

/**
 * Runs the release `fn` of `owner`'s hold on lock `name` (`lockId`: `${kind}\0${key}`) inside
 * `tracing:rlock:release` when someone subscribes there; otherwise just calls it.
 */
export function traceRelease<T>(scope: ReleaseScope, name: string, owner: string, lockId: string, fn: () => Promise<T>): Promise<T> {
  if (!isTraced(releaseTracing)) return fn();
  const context: ReleaseTraceContext = { name, owner, clientId: scope.clientId, kind: reportedKindOf(lockId), server: scope.redis.address };
  return releaseTracing.tracePromise(fn, context);
}
