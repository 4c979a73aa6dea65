import type { Attributes, Counter, Histogram, Meter, ObservableResult, ObservableUpDownCounter } from '@opentelemetry/api';
import type { HoldEndMessage, HoldStartMessage, RenewFailureMessage } from '../telemetry/hold-channels.js';
import type { LostMessage } from '../telemetry/channels.js';
import type { AcquireTraceContext } from '../telemetry/tracing.js';
import { errorType, lockScope, type LockNameAttribute } from './attributes.js';
import { ACQUIRE_BUCKETS_S, HOLD_BUCKETS_S, lockAttributes, lockMetrics } from './conventions.js';

/** How an acquisition ended: its own outcome, or `error` when it failed outside its wait (e.g. `syncReplicas`). */
export function outcomeOf(context: AcquireTraceContext): string {
  return context.outcome ?? (context.error === undefined ? 'acquired' : 'error');
}

/** The instruments' attributes of one lock kind and mapped name, built once, and its gauges' counts. */
interface Scope {
  readonly attributes: Attributes;
  /** The histograms' attributes: the scope's, with an outcome (and an error type). */
  readonly outcomes: Map<string, Attributes>;
  holds: number;
  waiters: number;
}

/**
 * rlock's metric instruments, fed from its channels. The two gauges are observed: the SDK reads
 * their counts when it collects, so an acquisition or a hold costs a count here, not a call into
 * the SDK each time it starts and ends. Every decrement of a gauge matches an increment this
 * object made, so a subscription that starts while locks are held or awaited never drives a gauge
 * below zero.
 */
export class LockMetrics {
  readonly #acquireDuration: Histogram;
  readonly #holdDuration: Histogram;
  readonly #holdsActive: ObservableUpDownCounter;
  readonly #waitersActive: ObservableUpDownCounter;
  readonly #lost: Counter;
  readonly #renewalFailures: Counter;
  readonly #lockName: LockNameAttribute | undefined;
  /** By lock kind and mapped name: as many as the `lockName` option makes (the SDK keeps as many series). */
  readonly #scopes = new Map<string, Scope>();
  /** Holds counted in `rlock.holds.active`: client, kind, name and owner. */
  readonly #holding = new Set<string>();
  /** Acquisitions counted in `rlock.waiters.active`: their scope, and when they started. */
  readonly #waiting = new WeakMap<object, Scope>();
  readonly #started = new WeakMap<object, number>();
  readonly #observeHolds = (result: ObservableResult): void => {
    for (const scope of this.#scopes.values()) result.observe(scope.holds, scope.attributes);
  };
  readonly #observeWaiters = (result: ObservableResult): void => {
    for (const scope of this.#scopes.values()) result.observe(scope.waiters, scope.attributes);
  };

  constructor(meter: Meter, lockName: LockNameAttribute | undefined) {
    this.#lockName = lockName;
    this.#acquireDuration = meter.createHistogram(lockMetrics.acquireDuration, {
      unit: 's',
      description: 'Time from an acquisition call to its outcome (acquired, timeout, aborted, error), its wait included.',
      advice: { explicitBucketBoundaries: ACQUIRE_BUCKETS_S },
    });
    this.#holdDuration = meter.createHistogram(lockMetrics.holdDuration, {
      unit: 's',
      description: "Time from a hold's first acquisition to its end (released, lost, client closed).",
      advice: { explicitBucketBoundaries: HOLD_BUCKETS_S },
    });
    this.#holdsActive = meter.createObservableUpDownCounter(lockMetrics.holdsActive, {
      unit: '{hold}',
      description: "Locks this process holds (an owner's re-entries count once; a semaphore's permits each).",
    });
    this.#waitersActive = meter.createObservableUpDownCounter(lockMetrics.waitersActive, {
      unit: '{waiter}',
      description: 'Acquisition calls in progress, waiting for a lock or permits.',
    });
    this.#holdsActive.addCallback(this.#observeHolds);
    this.#waitersActive.addCallback(this.#observeWaiters);
    this.#lost = meter.createCounter(lockMetrics.lost, { unit: '{hold}', description: 'Holds lost (the lost event), by reason.' });
    this.#renewalFailures = meter.createCounter(lockMetrics.renewalFailures, {
      unit: '{hold}',
      description: 'Holds whose watchdog renewal call failed (retried soon; the holder keeps its lock until its lease runs out).',
    });
  }

  /** Stops the gauges' observation (the SDK keeps the instruments). */
  stop(): void {
    this.#holdsActive.removeCallback(this.#observeHolds);
    this.#waitersActive.removeCallback(this.#observeWaiters);
  }

  acquireStarted(context: AcquireTraceContext): void {
    const scope = this.#scope(context.kind, context.name);
    scope.waiters += 1;
    this.#waiting.set(context, scope);
    this.#started.set(context, performance.now());
  }

  acquireEnded(context: AcquireTraceContext): void {
    const scope = this.#waiting.get(context);
    if (scope === undefined) return;
    this.#waiting.delete(context);
    const started = this.#started.get(context)!;
    scope.waiters -= 1;
    const outcome = outcomeOf(context);
    const attributes = outcome === 'error' ? withOutcome(scope, lockAttributes.acquireOutcome, outcome, errorType(context.error)) : withOutcome(scope, lockAttributes.acquireOutcome, outcome);
    this.#acquireDuration.record((context.waitMs ?? performance.now() - started) / 1_000, attributes);
  }

  holdStarted(message: HoldStartMessage): void {
    this.#holding.add(holdKey(message));
    this.#scope(message.kind, message.name).holds += message.permits;
  }

  holdEnded(message: HoldEndMessage): void {
    if (!this.#holding.delete(holdKey(message))) return;
    const scope = this.#scope(message.kind, message.name);
    scope.holds -= message.permits;
    this.#holdDuration.record(message.heldMs / 1_000, withOutcome(scope, lockAttributes.holdOutcome, message.reason));
  }

  lost(message: LostMessage): void {
    const attributes = { [lockAttributes.lostReason]: message.reason };
    const mapped = this.#lockName?.(message.name);
    this.#lost.add(1, typeof mapped === 'string' ? { ...attributes, [lockAttributes.name]: mapped } : attributes);
  }

  renewalFailed(message: RenewFailureMessage): void {
    const attributes = { ...lockScope(message.kind, message.name, this.#lockName), [lockAttributes.errorType]: errorType(message.error) };
    this.#renewalFailures.add(1, attributes);
  }

  #scope(kind: string, name: string): Scope {
    const mapped = this.#lockName?.(name);
    const key = typeof mapped === 'string' ? `${kind}\u0000${mapped}` : kind;
    let scope = this.#scopes.get(key);
    if (scope === undefined) {
      scope = { attributes: lockScope(kind, name, () => mapped), outcomes: new Map(), holds: 0, waiters: 0 };
      this.#scopes.set(key, scope);
    }
    return scope;
  }
}

/** The scope's attributes with `attribute` = `outcome` (and `error.type`), the same object each time. */
function withOutcome(scope: Scope, attribute: string, outcome: string, error?: string): Attributes {
  const key = error === undefined ? `${attribute}\u0000${outcome}` : `${attribute}\u0000${outcome}\u0000${error}`;
  let attributes = scope.outcomes.get(key);
  if (attributes === undefined) {
    attributes = { ...scope.attributes, [attribute]: outcome };
    if (error !== undefined) attributes[lockAttributes.errorType] = error;
    scope.outcomes.set(key, attributes);
  }
  return attributes;
}

function holdKey(message: HoldStartMessage): string {
  return `${message.clientId}\u0000${message.kind}\u0000${message.name}\u0000${message.owner}`;
}
