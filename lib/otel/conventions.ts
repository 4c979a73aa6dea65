/**
 * rlock's OpenTelemetry conventions: instrument and attribute names. There is no OpenTelemetry
 * semantic convention for locks; these follow its naming rules (dotted, lower case, seconds for
 * durations, `{unit}` annotations for counts) and reuse its database attributes.
 */
export const lockMetrics = {
  /** Histogram, s: from the call to its outcome, per acquisition (lock and semaphore request). */
  acquireDuration: 'rlock.acquire.duration',
  /** Histogram, s: from a hold's first acquisition to its end (release, loss, client closed). */
  holdDuration: 'rlock.hold.duration',
  /** Observable UpDownCounter, `{hold}`: holds (a semaphore's permits) this process has now. */
  holdsActive: 'rlock.holds.active',
  /** Observable UpDownCounter, `{waiter}`: acquisition calls in progress (their wait included). */
  waitersActive: 'rlock.waiters.active',
  /** Counter, `{hold}`: holds lost (the `lost` event). */
  lost: 'rlock.lost',
  /** Counter, `{hold}`: holds whose watchdog renewal call failed (it is retried soon). */
  renewalFailures: 'rlock.renewal.failures',
} as const;

/** Attribute names rlock's instruments and spans use. */
export const lockAttributes = {
  /** `lock`, `fenced`, `fair-lock`, `read`, `write`, `semaphore`. */
  kind: 'rlock.lock.kind',
  /** The lock's name, only as the `lockName` option maps it (raw names are unbounded). */
  name: 'rlock.lock.name',
  /** `acquired`, `timeout`, `aborted`, `error`. */
  acquireOutcome: 'rlock.acquire.outcome',
  /** Attempts sent to Redis by an acquisition that acquired (span only). */
  acquireAttempts: 'rlock.acquire.attempts',
  /** A semaphore request's permits (span only). */
  permits: 'rlock.semaphore.permits',
  /** How a hold ended: `released`, a loss reason (`deleted`, `taken`, `expired`, …) or `closed`. */
  holdOutcome: 'rlock.hold.outcome',
  /** Why a hold was lost: `deleted`, `taken`, `expired`, `quorum`, … */
  lostReason: 'rlock.lost.reason',
  /** OpenTelemetry's: the error's class name, on failed acquisitions and renewals. */
  errorType: 'error.type',
  /** OpenTelemetry's, on spans: `redis`. */
  dbSystem: 'db.system.name',
  /** OpenTelemetry's, on spans: the server's host (on a connection to one server). */
  serverAddress: 'server.address',
  /** OpenTelemetry's, on spans: the server's port. */
  serverPort: 'server.port',
} as const;

/** Bucket bounds of `rlock.acquire.duration`, s: an uncontended acquisition is one round trip. */
export const ACQUIRE_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Bucket bounds of `rlock.hold.duration`, s. */
export const HOLD_BUCKETS_S = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
