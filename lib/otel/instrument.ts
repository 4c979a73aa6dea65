import { subscribe, tracingChannel, unsubscribe, type TracingChannelSubscribers } from 'node:diagnostics_channel';
import { metrics, trace, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { diagnosticsChannels, type LostMessage } from '../telemetry/channels.js';
import type { HoldEndMessage, HoldStartMessage, RenewFailureMessage } from '../telemetry/hold-channels.js';
import { tracingChannels, type AcquireTraceContext, type ReleaseTraceContext } from '../telemetry/tracing.js';
import type { LockNameAttribute } from './attributes.js';
import { LockMetrics } from './metrics.js';
import { LockSpans } from './spans.js';
import { checkOptions } from '../validate.js';

/** Options of {@link instrumentLocks}. */
export interface LockInstrumentationOptions {
  /** Where the metrics go. @default the global MeterProvider (`metrics.setGlobalMeterProvider`, or the SDK's) */
  meterProvider?: MeterProvider;
  /** Where the spans go. @default the global TracerProvider */
  tracerProvider?: TracerProvider;
  /** Record the metrics. @default true */
  metrics?: boolean;
  /** Record spans for acquisitions and releases. @default true */
  traces?: boolean;
  /**
   * The `rlock.lock.name` attribute of a lock name, or undefined for none. Without it no
   * attribute carries a lock's name: names often hold ids (`order:1234`), and each distinct
   * value is a time series of its own. Map names to a bounded set, e.g. `(name) => name.split(':')[0]`.
   */
  lockName?: LockNameAttribute;
}

/** What {@link instrumentLocks} returns. */
export interface LockInstrumentation {
  /** Stops recording: unsubscribes from every channel. Idempotent. */
  disable(): void;
}

/** The instrumentation scope of rlock's meter and tracer. */
export const INSTRUMENTATION_SCOPE = 'rlock';

const noop = (): void => undefined;

const INSTRUMENTATION_OPTIONS = ['meterProvider', 'tracerProvider', 'metrics', 'traces', 'lockName'];

/**
 * Turns rlock's `node:diagnostics_channel` events into OpenTelemetry metrics
 * (`rlock.acquire.duration`, `rlock.hold.duration`, `rlock.holds.active`, `rlock.waiters.active`,
 * `rlock.lost`, `rlock.renewal.failures`) and spans (`rlock.acquire`, `rlock.release`), for every
 * LockClient of the process, from any loaded copy of rlock. Call it once, after the OpenTelemetry
 * SDK is set up; until then (and after `disable()`) rlock publishes nothing.
 * @throws InvalidArgumentError for options it does not know, or not an object.
 * @example
 * import { instrumentLocks } from 'rlock/otel';
 * instrumentLocks({ lockName: (name) => name.split(':')[0] });
 */
export function instrumentLocks(options: LockInstrumentationOptions = {}): LockInstrumentation {
  checkOptions(options, INSTRUMENTATION_OPTIONS);
  const lockName = options.lockName;
  const lockMetrics =
    options.metrics === false ? undefined : new LockMetrics((options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE), lockName);
  const spans = options.traces === false ? undefined : new LockSpans((options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE), lockName);
  const undo: (() => void)[] = [];

  const acquire: TracingChannelSubscribers<AcquireTraceContext> = {
    start: (context) => {
      lockMetrics?.acquireStarted(context);
      spans?.acquireStarted(context);
    },
    end: noop,
    asyncStart: noop,
    asyncEnd: (context) => {
      lockMetrics?.acquireEnded(context);
      spans?.acquireEnded(context);
    },
    error: noop,
  };
  const acquireChannel = tracingChannel<unknown, AcquireTraceContext>(tracingChannels.acquire);
  acquireChannel.subscribe(acquire);
  undo.push(() => acquireChannel.unsubscribe(acquire));

  if (spans) {
    const release: TracingChannelSubscribers<ReleaseTraceContext> = {
      start: (context) => spans.releaseStarted(context),
      end: noop,
      asyncStart: noop,
      asyncEnd: (context) => spans.releaseEnded(context),
      error: noop,
    };
    const releaseChannel = tracingChannel<unknown, ReleaseTraceContext>(tracingChannels.release);
    releaseChannel.subscribe(release);
    undo.push(() => releaseChannel.unsubscribe(release));
  }

  if (lockMetrics) {
    undo.push(() => lockMetrics.stop());
    const listen = <T>(name: string, fn: (message: T) => void): void => {
      const onMessage = (message: unknown): void => fn(message as T);
      subscribe(name, onMessage);
      undo.push(() => unsubscribe(name, onMessage));
    };
    listen<HoldStartMessage>(diagnosticsChannels.holdStart, (m) => lockMetrics.holdStarted(m));
    listen<HoldEndMessage>(diagnosticsChannels.holdEnd, (m) => lockMetrics.holdEnded(m));
    listen<LostMessage>(diagnosticsChannels.lost, (m) => lockMetrics.lost(m));
    listen<RenewFailureMessage>(diagnosticsChannels.renewFailure, (m) => lockMetrics.renewalFailed(m));
  }

  return {
    disable: () => {
      for (const stop of undo.splice(0)) stop();
    },
  };
}
