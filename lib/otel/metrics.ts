import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import type { HoldEndMessage, HoldStartMessage, RenewFailureMessage } from '../telemetry/hold-channels.js';
import type { LostMessage } from '../telemetry/channels.js';
import type { AcquireTraceContext } from '../telemetry/tracing.js';
import { errorType, lockScope, type LockNameAttribute } from './attributes.js';
import { ACQUIRE_BUCKETS_S, HOLD_BUCKETS_S, lockAttributes, lockMetrics } from './conventions.js';

/** How an acquisition ended: its own outcome, or `error` when it failed outside its wait (e.g. `syncReplicas`). */
export function outcomeOf(context: AcquireTraceContext): string {
  return context.outcome ?? (context.error === undefined ? 'acquired' : 'error');
}

/**
 * rlock's metric instruments, fed from its channels. Every decrement of an up-down counter
 * matches an increment this object made, so a subscription that starts while locks are held or
 * awaited never drives a gauge below zero.
 */
export class LockMetrics {
  readonly #acquireDuration: Histogram;
  readonly #holdDuration: Histogram;
  readonly #holdsActive: UpDownCounter;
  readonly #waitersActive: UpDownCounter;
  readonly #lost: Counter;
  readonly #renewalFailures: Counter;
  readonly #lockName: LockNameAttribute | undefined;
  /** Acquisitions counted in `rlock.waiters.active`, with when they started. */
  readonly #waiting = new WeakMap<object, number>();
  /** Holds counted in `rlock.holds.active`: client, kind, name and owner. */
  readonly #holding = new Set<string>();

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
    this.#holdsActive = meter.createUpDownCounter(lockMetrics.holdsActive, {
      unit: '{hold}',
      description: "Locks this process holds (an owner's re-entries count once; a semaphore's permits each).",
    });
    this.#waitersActive = meter.createUpDownCounter(lockMetrics.waitersActive, {
      unit: '{waiter}',
      description: 'Acquisition calls in progress, waiting for a lock or permits.',
    });
    this.#lost = meter.createCounter(lockMetrics.lost, { unit: '{hold}', description: 'Holds lost (the lost event), by reason.' });
    this.#renewalFailures = meter.createCounter(lockMetrics.renewalFailures, {
      unit: '{hold}',
      description: 'Holds whose watchdog renewal call failed (retried soon; the holder keeps its lock until its lease runs out).',
    });
  }

  acquireStarted(context: AcquireTraceContext): void {
    this.#waiting.set(context, performance.now());
    this.#waitersActive.add(1, lockScope(context.kind, context.name, this.#lockName));
  }

  acquireEnded(context: AcquireTraceContext): void {
    const started = this.#waiting.get(context);
    if (started === undefined) return;
    this.#waiting.delete(context);
    const scope = lockScope(context.kind, context.name, this.#lockName);
    this.#waitersActive.add(-1, scope);
    const outcome = outcomeOf(context);
    const attributes: Attributes = { ...scope, [lockAttributes.acquireOutcome]: outcome };
    if (outcome === 'error') attributes[lockAttributes.errorType] = errorType(context.error);
    this.#acquireDuration.record((context.waitMs ?? performance.now() - started) / 1_000, attributes);
  }

  holdStarted(message: HoldStartMessage): void {
    this.#holding.add(holdKey(message));
    this.#holdsActive.add(message.permits, lockScope(message.kind, message.name, this.#lockName));
  }

  holdEnded(message: HoldEndMessage): void {
    if (!this.#holding.delete(holdKey(message))) return;
    const scope = lockScope(message.kind, message.name, this.#lockName);
    this.#holdsActive.add(-message.permits, scope);
    this.#holdDuration.record(message.heldMs / 1_000, { ...scope, [lockAttributes.holdOutcome]: message.reason });
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
}

function holdKey(message: HoldStartMessage): string {
  return `${message.clientId}\u0000${message.kind}\u0000${message.name}\u0000${message.owner}`;
}
