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

/**
 * Spans for rlock's acquisitions (their wait included) and releases, from its TracingChannels:
 * each starts in the caller's async context, so it is a child of the caller's active span.
 */
export class LockSpans {
  readonly #tracer: Tracer;
  readonly #lockName: LockNameAttribute | undefined;
  readonly #spans = new WeakMap<object, Span>();
  /** `server.*` attributes per server address (a process talks to few servers). */
  readonly #servers = new Map<string | undefined, Attributes>();

  constructor(tracer: Tracer, lockName: LockNameAttribute | undefined) {
    this.#tracer = tracer;
    this.#lockName = lockName;
  }

  acquireStarted(context: AcquireTraceContext): void {
    const attributes = this.#attributes(context);
    if (context.permits !== undefined) attributes[lockAttributes.permits] = context.permits;
    this.#start(lockSpans.acquire, context, attributes);
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

  #server(address: string | undefined): Attributes {
    let attributes = this.#servers.get(address);
    if (!attributes) {
      attributes = serverAttributes(address);
      if (this.#servers.size < 1_000) this.#servers.set(address, attributes);
    }
    return attributes;
  }

  #take(context: object): Span | undefined {
    const span = this.#spans.get(context);
    this.#spans.delete(context);
    return span;
  }

  #attributes(context: ReleaseTraceContext | AcquireTraceContext): Attributes {
    const attributes: Attributes = {
      [lockAttributes.dbSystem]: 'redis',
      ...this.#server(context.server),
      [lockAttributes.kind]: context.kind,
    };
    const mapped = this.#lockName?.(context.name);
    if (typeof mapped === 'string') attributes[lockAttributes.name] = mapped;
    return attributes;
  }
}

function failed(span: Span, error: unknown): void {
  span.setAttribute(lockAttributes.errorType, errorType(error));
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
