import type { Redis } from 'ioredis';

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
   * renewed every third of this; if the holder dies it frees within this time.
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
   * Connection used for pub/sub wake-up notices. rlock does not close a connection you pass.
   * @default a duplicate of the main connection, closed by `close()`
   */
  subscriber?: Redis;
}

export const DEFAULTS = {
  keyPrefix: 'rlock',
  watchdogTimeout: 30_000,
  fairLockWaitTimeout: 5_000,
} as const;

/** How long a lock's wake-up subscription is kept after its last local waiter left, ms. */
export const SUBSCRIPTION_LINGER_MS = 2_000;

/** Locks renewed per script call by the watchdog. */
export const RENEW_BATCH_SIZE = 100;

/** Retry delay after a failed renewal, ms (a third of the lease still bounds it). */
export const RENEW_RETRY_MS = 1_000;
