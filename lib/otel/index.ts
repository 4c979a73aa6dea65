// `rlock/otel`: OpenTelemetry metrics and spans for rlock. Needs `@opentelemetry/api` (an optional
// peer dependency of rlock: only this entry point loads it).
export { instrumentLocks, INSTRUMENTATION_SCOPE, type LockInstrumentation, type LockInstrumentationOptions } from './instrument.js';
export type { LockNameAttribute } from './attributes.js';
export { ACQUIRE_BUCKETS_S, HOLD_BUCKETS_S, lockAttributes, lockMetrics } from './conventions.js';
export { lockSpans } from './spans.js';
