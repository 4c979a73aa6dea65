import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { tracingChannels, type AcquireTraceContext, type LockClient } from '../../lib/index.js';
import { lockAttributes as A, lockSpans } from '../../lib/otel/index.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { useOtel } from './otel-harness.js';

describe('rlock/otel spans', () => {
  const rig = useFaultRig();
  const otel = useOtel();
  const client = (): LockClient => rig.client(rig.lockConnect('direct'));

  it('acquire (with its wait) and release are children of the caller active span, with the server and the outcome', async () => {
    otel.instrument();
    const a = client();
    const b = client();
    const tracer = otel.tracerProvider.getTracer('spec');
    const blocker = await b.getLock('orders:9').acquire();
    setTimeout(() => void blocker.release(), 100);
    const parent = await tracer.startActiveSpan('handle request', async (span) => {
      const lease = await a.getLock('orders:9').acquire({ waitTime: 5_000 });
      await lease.release();
      expect(await a.getLock('orders:9').tryLock()).toBe(true);
      span.end();
      return span.spanContext();
    });
    const spans = otel.spans.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === parent.spanId);
    expect(spans.map((s) => s.name)).toEqual([lockSpans.acquire, lockSpans.release, lockSpans.acquire]);
    const [waited, released] = spans;
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(parent.traceId);
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.attributes).toMatchObject({
        [A.dbSystem]: 'redis',
        [A.serverAddress]: '127.0.0.1',
        [A.serverPort]: rig.server.port,
        [A.kind]: 'lock',
      });
      expect(Object.values(span.attributes)).not.toContain('orders:9');
      expect(span.attributes[A.name]).toBeUndefined();
    }
    expect(waited!.attributes[A.acquireOutcome]).toBe('acquired');
    expect(waited!.attributes[A.acquireAttempts]).toBeGreaterThanOrEqual(2);
    // The span covers the wait.
    const ms = (t: [number, number]): number => t[0] * 1_000 + t[1] / 1e6;
    expect(ms(waited!.endTime) - ms(waited!.startTime)).toBeGreaterThanOrEqual(80);
    expect(released!.status.code).toBe(SpanStatusCode.UNSET);
    // Outside any span: root spans.
    otel.spans.reset();
    await (await a.getLock('solo').acquire()).release();
    const roots = otel.spans.getFinishedSpans().filter((s) => s.parentSpanContext === undefined);
    expect(roots.map((s) => s.name)).toEqual([lockSpans.acquire, lockSpans.release]);
  });

  it('a timeout ends the span with its outcome; a failure sets the error status; a semaphore says its permits', async () => {
    otel.instrument({ lockName: (name) => name.split(':')[0] });
    const a = client();
    const b = client();
    const held = await b.getLock('jobs:1').acquire();
    expect(await a.getLock('jobs:1').tryLock(50)).toBe(false);
    const closing = client();
    const failing = closing.getLock('jobs:1').acquire().catch((error: unknown) => error);
    // Well into its wait (subscribed, asleep) before the client closes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await closing.close();
    await failing;
    await held.release();
    const permit = await a.getSemaphore('pool', { permits: 4 }).acquire({ permits: 3 });
    await permit.release();
    const byOutcome = (outcome: string) => otel.spans.getFinishedSpans().filter((s) => s.attributes[A.acquireOutcome] === outcome);
    expect(byOutcome('timeout')).toHaveLength(1);
    expect(byOutcome('timeout')[0]!.status.code).toBe(SpanStatusCode.UNSET);
    const [failed] = byOutcome('error');
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed!.attributes[A.errorType]).toBe('LockClientClosedError');
    expect(failed!.events.map((e) => e.name)).toContain('exception');
    const semaphore = otel.spans.getFinishedSpans().filter((s) => s.attributes[A.kind] === 'semaphore');
    expect(semaphore.map((s) => s.name)).toEqual([lockSpans.acquire, lockSpans.release]);
    expect(semaphore[0]!.attributes[A.permits]).toBe(3);
    expect(semaphore[0]!.attributes[A.name]).toBe('pool');
    expect(byOutcome('timeout')[0]!.attributes[A.name]).toBe('jobs');
  });

  it('publishes tracing:rlock:acquire in the caller async context, so an APM store bound to start is active inside', async () => {
    const { AsyncLocalStorage } = await import('node:async_hooks');
    const store = new AsyncLocalStorage<string>();
    const channel = tracingChannel<unknown, AcquireTraceContext>(tracingChannels.acquire);
    channel.start.bindStore(store, (context) => `apm:${context.kind}`);
    const seen: (string | undefined)[] = [];
    // The pub/sub subscription of a waiting acquisition runs inside the operation.
    const onEnd = (): void => void seen.push(store.getStore());
    subscribe('tracing:rlock:acquire:asyncEnd', onEnd);
    try {
      const a = client();
      const lease = await a.getLock('ctx').acquire();
      expect(store.getStore()).toBeUndefined();
      await lease.release();
    } finally {
      channel.start.unbindStore(store);
      unsubscribe('tracing:rlock:acquire:asyncEnd', onEnd);
    }
    expect(seen).toEqual(['apm:lock']);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
