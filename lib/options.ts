import type { RedisConnection } from './redis/connection.js';
import type { ReplicaAck } from './redis/port.js';

/** `syncReplicas`: after each acquisition and renewal, wait (WAIT) for this many replica acks. */
export interface SyncReplicas {
  /** Replicas that must confirm. */
  replicas: number;
  /** How long to wait for them, ms. */
  timeout: number;
}

/** Options of {@link LockClient}. */
export interface LockClientOptions {
  /**
   * Prefix of every key and channel rlock writes: a lock named `a` lives at `{<keyPrefix>:a}`.
   * Must not contain braces (it sits inside the Cluster hash tag).
   * @default 'rlock'
   */
  keyPrefix?: string;
  /**
   * Lease of a lock taken without `leaseTime` (watchdog mode), ms. While the lock is held it is
   * renewed every third of this; if the holder dies it frees within this time. At least 50.
   * @default 30000
   */
  watchdogTimeout?: number;
  /**
   * How long a waiter of a fair lock keeps its place in the queue without checking in, ms. A
   * waiting call checks in every third of this; a waiter whose client died is dropped this long
   * after its last check-in, and the next one gets its turn.
   * @default 5000
   */
  fairLockWaitTimeout?: number;
  /**
   * Watchdog mode: how long a hold (or a permit) is renewed at most, ms, from when it was taken.
   * Then it is let go in Redis, `lost` is emitted with reason `'max-hold-time'` and its Leases
   * abort (before anyone else can take it): a hung holder whose event loop still ticks cannot keep
   * a lock forever. Each acquiring call may give its own (`maxHoldTime` option).
   * @default undefined (no limit)
   */
  maxHoldTime?: number;
  /**
   * Connection used for pub/sub wake-up notices, of the same client as the main connection
   * (node-redis: connected). rlock does not close a connection you pass.
   * @default a duplicate of the main connection, closed by `close()`
   */
  subscriber?: RedisConnection;
  /**
   * After each acquisition (and renewal), WAIT for this many replicas to confirm it. An
   * acquisition confirmed by fewer is rolled back and rejected with LockReplicationError; a
   * renewal confirmed by fewer is reported as an `error` event. Narrows the failover window in
   * which a promoted replica does not know a lock (see docs/cluster-and-sentinel.md).
   * @default undefined (no WAIT)
   */
  syncReplicas?: SyncReplicas;
  /**
   * Cluster only: how wake-up notices travel. `auto` uses sharded pub/sub (SSUBSCRIBE /
   * SPUBLISH: a notice reaches one shard) on Redis ≥ 7 where the client keeps sharded
   * subscriptions (ioredis, node-redis 6), and classic pub/sub otherwise.
   * @default 'auto'
   */
  pubsub?: 'auto' | 'sharded' | 'classic';
  /**
   * A name for this client's process, shown with its host and pid beside each of its holds and
   * waits by `locks.inspect(name)` and the `rlock` command (e.g. `'billing-worker'`): 1 to 128
   * characters, no control characters.
   * @default undefined (host and pid only)
   */
  clientName?: string;
  /**
   * Renew this client's watchdog-mode holds from a worker thread, so that a hold outlives a
   * blocked event loop (a long synchronous step, a long GC): see {@link RenewalThreadOptions}.
   * @default undefined (the watchdog renews on the event loop)
   */
  renewalThread?: RenewalThreadOptions;
}

/** `renewalThread`: how the renewal thread connects, and how long a blocked loop it covers. */
export interface RenewalThreadOptions {
  /**
   * A module (a file path, relative to the working directory, or a `file:` URL) whose default
   * export returns (or resolves to) a connected client of a supported family, to the same server,
   * database and key prefix as the LockClient's connection. The thread calls it once and closes
   * that client in `locks.close()`.
   */
  connect: string | URL;
  /**
   * ms: once the event loop has been blocked this long, the thread stops renewing and the holds go
   * (a hung process loses its locks within `maxStall` + one lease, as a dead one does); when the
   * loop resumes, each such hold emits `lost` with reason `'stalled'`. At least 1000.
   * @default 3 × watchdogTimeout (90000)
   */
  maxStall?: number;
}

export const DEFAULTS = {
  keyPrefix: 'rlock',
  watchdogTimeout: 30_000,
  fairLockWaitTimeout: 5_000,
} as const;

/** The longest `clientName`, characters: a client's identity in Redis stays a few hundred bytes. */
export const MAX_CLIENT_NAME_LENGTH = 128;

/** How long a lock's wake-up subscription is kept after its last local waiter left, ms. */
export const SUBSCRIPTION_LINGER_MS = 2_000;

/** Locks renewed per script call by the watchdog (one call per node or slot per batch). */
export const RENEW_BATCH_SIZE = 500;

/** `syncReplicas` in the form the scripts take. */
export function replicaAck(sync: SyncReplicas | undefined): ReplicaAck | undefined {
  return sync && { replicas: sync.replicas, timeoutMs: sync.timeout };
}

/** Retry delay after a failed renewal, ms (a third of the lease still bounds it). */
export const RENEW_RETRY_MS = 1_000;

/** Options of {@link RedLock}, passed after its locks: `new RedLock(a, b, c, { nodeTimeout: 20 })`. */
export interface RedLockOptions {
  /**
   * How long to wait for one node's answer before counting that node as failed, ms. A dead or
   * frozen node costs at most this per round, and a round is decided as soon as its outcome is
   * certain. Keep it far below the lease (the elapsed time comes off the validity). Failed
   * acquisition rounds are retried after a random delay of up to twice this.
   * @default 50
   */
  nodeTimeout?: number;
  /**
   * In watchdog mode, how many renewals a hold gets; after the last one it is left to expire
   * and the holder is told (`lost`, reason `expired`), so a hung holder cannot keep the lock
   * forever. Omitted: no cap.
   * @default undefined
   */
  maxRenewals?: number;
}

export const REDLOCK_DEFAULTS = {
  nodeTimeout: 50,
} as const;

/** Clock drift allowed for by a RedLock: this fraction of the lease, plus REDLOCK_DRIFT_MS. */
export const REDLOCK_DRIFT_FACTOR = 0.01;

/** Fixed part of a RedLock's clock-drift allowance, ms. */
export const REDLOCK_DRIFT_MS = 2;

/**
 * The holder's clock allows for this fraction of a lease, plus HOLD_DRIFT_MS, of clock-rate
 * drift and timer lateness: a hold counts as lost that much before its key can expire in Redis.
 */
export const HOLD_DRIFT_FACTOR = 0.01;

/** Fixed part of the holder's clock margin, ms (timers on a busy event loop fire late). */
export const HOLD_DRIFT_MS = 25;

/**
 * The shortest lease (and watchdog timeout) accepted, ms. A lease within the holder's clock margin
 * (about 25 ms) would end by that clock before any answer came: it could never be held.
 */
export const MIN_LEASE_MS = 50;

/** The shortest `renewalThread.maxStall`, ms: several heartbeats (renewal-thread.ts BEAT_MS), so a busy loop is no stall. */
export const MIN_MAX_STALL_MS = 1_000;

/** How long a release waits for Redis before it rejects (it goes on in the background), ms. */
export const RELEASE_TIMEOUT_MS = 5_000;

/** The longest a resent final release or forceUnlock is answered from its record, ms. */
export const RECORD_MAX_MS = 60_000;

/** How long a single attempt (`waitTime` 0) waits for Redis' answer before it counts as refused, ms. */
export const SINGLE_ATTEMPT_MS = 1_000;
