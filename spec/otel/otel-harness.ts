import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { instrumentLocks, type LockInstrumentation, type LockInstrumentationOptions } from '../../lib/otel/index.js';

/** One data point as the specs look at it: attributes, and a number (sum and counts for a histogram). */
export interface Point {
  readonly attributes: Record<string, unknown>;
  readonly value: number | Histogram;
}

/** The OpenTelemetry SDK with in-memory exporters, and rlock instrumented into it. */
export interface OtelHarness {
  readonly spans: InMemorySpanExporter;
  readonly tracerProvider: BasicTracerProvider;
  /** Instruments rlock into this SDK (undone after the test). */
  instrument(options?: Omit<LockInstrumentationOptions, 'meterProvider' | 'tracerProvider'>): LockInstrumentation;
  /** Collects now: every data point of metric `name` (cumulative since the instrumentation). */
  points(name: string): Promise<Point[]>;
  /** Every attribute set of every metric collected now. */
  allAttributes(): Promise<Record<string, unknown>[]>;
}

export function useOtel(): OtelHarness {
  const contextManager = new AsyncLocalStorageContextManager();
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  let exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  let reader: PeriodicExportingMetricReader | undefined;
  let meterProvider: MeterProvider | undefined;
  const active: LockInstrumentation[] = [];

  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
  });
  afterAll(() => {
    context.disable();
  });
  afterEach(async () => {
    for (const instrumentation of active.splice(0)) instrumentation.disable();
    spans.reset();
    await meterProvider?.shutdown();
    meterProvider = undefined;
  });

  const collect = async () => {
    await reader!.forceFlush();
    const all = exporter.getMetrics();
    return all.at(-1)?.scopeMetrics.flatMap((scope) => scope.metrics) ?? [];
  };

  return {
    spans,
    tracerProvider,
    instrument: (options = {}) => {
      exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
      reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
      meterProvider = new MeterProvider({ readers: [reader] });
      const instrumentation = instrumentLocks({ ...options, meterProvider, tracerProvider });
      active.push(instrumentation);
      return instrumentation;
    },
    points: async (name) => {
      const metric = (await collect()).find((m) => m.descriptor.name === name);
      const points = (metric?.dataPoints ?? []) as DataPoint<number | Histogram>[];
      return points.map((p) => ({ attributes: { ...p.attributes }, value: p.value }));
    },
    allAttributes: async () => (await collect()).flatMap((m) => m.dataPoints.map((p) => ({ ...p.attributes }))),
  };
}

/** The value of the data point whose attributes include `match` (0 when there is none). */
export function valueOf(points: Point[], match: Record<string, unknown>): number {
  const point = points.find((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v));
  if (!point) return 0;
  return typeof point.value === 'number' ? point.value : point.value.count;
}

/** A histogram data point's value whose attributes include `match`. */
export function histogramOf(points: Point[], match: Record<string, unknown>): Histogram | undefined {
  const point = points.find((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v));
  return point && typeof point.value !== 'number' ? point.value : undefined;
}
