import { context as otelContext, SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { AcquireTraceContext, ReleaseTraceContext } from '../telemetry/tracing.js';
import { errorType, serverAttributes, type LockNameAttribute } from './attributes.js';
import { lockAttributes } from './conventions.js';
import { outcomeOf } from './metrics.js';

/** Span names: low in cardinality (the lock kind is an attribute, the name only through the option). */
export const lockSpans = {
  /** One acquisition, its wait included. */
  acquire: 'rlock.acquire',
  /** One release call. */
  release: 'rlock.release',
} as const;

/** The most attribute sets kept (server, kind and mapped name); past it, each span builds its own. */
const KEPT_ATTRIBUTES = 1_000;

/**
 * Spans for rlock's acquisitions (their wait included) and releases, from its TracingChannels:
 * each starts in the caller's async context, so it is a child of the caller's active span.
 */
export class LockSpans {
  readonly #tracer: Tracer;
  readonly #lockName: LockNameAttribute | undefined;
  readonly #spans = new WeakMap<object, Span>();
  /** A span's start attributes by server, kind and mapped name (a process has few of each); never changed once made. */
  readonly #attributeSets = new Map<string, Attributes>();

  constructor(tracer: Tracer, lockName: LockNameAttribute | undefined) {
    this.#tracer = tracer;
    this.#lockName = lockName;
  }

  acquireStarted(context: AcquireTraceContext): void {
    if (context.permits === undefined) {
      this.#start(lockSpans.acquire, context, this.#attributes(context));
      return;
    }
    this.#start(lockSpans.acquire, context, { ...this.#attributes(context), [lockAttributes.permits]: context.permits });
  }

  acquireEnded(context: AcquireTraceContext): void {
    const span = this.#take(context);
    if (!span) return;
    const outcome = outcomeOf(context);
    span.setAttribute(lockAttributes.acquireOutcome, outcome);
    if (context.attempts !== undefined) span.setAttribute(lockAttributes.acquireAttempts, context.attempts);
    if (outcome === 'error') failed(span, context.error);
    span.end();
  }

  releaseStarted(context: ReleaseTraceContext): void {
    this.#start(lockSpans.release, context, this.#attributes(context));
  }

  releaseEnded(context: ReleaseTraceContext): void {
    const span = this.#take(context);
    if (!span) return;
    if (context.error !== undefined) failed(span, context.error);
    span.end();
  }

  #start(name: string, context: object, attributes: Attributes): void {
    // Called synchronously by the caller's call: the active context is the caller's.
    this.#spans.set(context, this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, otelContext.active()));
  }

  #take(context: object): Span | undefined {
    const span = this.#spans.get(context);
    this.#spans.delete(context);
    return span;
  }

  /** The start attributes of a span (the tracer copies them): the same object for the same server, kind and mapped name. */
  #attributes(context: ReleaseTraceContext | AcquireTraceContext): Attributes {
    const mapped = this.#lockName?.(context.name);
    const key = `${context.server ?? ''}\u0000${context.kind}${typeof mapped === 'string' ? `\u0000${mapped}` : ''}`;
    let attributes = this.#attributeSets.get(key);
    if (attributes === undefined) {
      attributes = {
        [lockAttributes.dbSystem]: 'redis',
        ...serverAttributes(context.server),
        [lockAttributes.kind]: context.kind,
      };
      if (typeof mapped === 'string') attributes[lockAttributes.name] = mapped;
      if (this.#attributeSets.size < KEPT_ATTRIBUTES) this.#attributeSets.set(key, attributes);
    }
    return attributes;
  }
}

function failed(span: Span, error: unknown): void {
  span.setAttribute(lockAttributes.errorType, errorType(error));
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
