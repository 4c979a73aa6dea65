// `--otel`: runs the bench with rlock instrumented into the OpenTelemetry SDK (rlock/otel from
// dist/), metrics and spans recorded for every acquisition and release, as an application with
// the SDK has them; the spans go to an exporter that drops them, so the cost measured is
// rlock/otel's and the SDK's, not an exporter's network. The SDK packages come from the root's
// devDependencies (the bench runs from the root, with the root's dist/ and its @opentelemetry/api).
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { instrumentLocks } from '../../dist/otel.js';

const dropSpans: SpanExporter = {
  export: (_spans: ReadableSpan[], done) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};

/** Instruments rlock into a fresh SDK; the returned function stops and shuts it down. */
export function startOtel(signals: { metrics?: boolean; traces?: boolean } = {}): () => Promise<void> {
  const meterProvider = new MeterProvider({
    // Collected every 10 s (cumulative, into memory), as a periodic exporter would.
    readers: [new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 10_000 })],
  });
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropSpans)] });
  const instrumentation = instrumentLocks({ meterProvider, tracerProvider, ...signals });
  return async () => {
    instrumentation.disable();
    await Promise.all([meterProvider.shutdown(), tracerProvider.shutdown()]);
  };
}
