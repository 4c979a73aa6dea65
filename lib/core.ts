import type { EventEmitter } from 'eventemitter3';
import type { LockLostReason } from './errors.js';
import type { WaiterQueues } from './pubsub/waiter-queues.js';
import type { LockScripts, PublishCommand, RedisConnection, ReplicaAck } from './scripts/registry.js';
import type { Topology } from './topology.js';
import type { Holds } from './holds.js';
import type { Watchdog } from './watchdog.js';

/** Payload of `acquired`, `released` and `renewed`. */
export interface LockEventInfo {
  /** The lock's name. */
  readonly name: string;
  /** The owner id: `${clientId}:${contextId}`. */
  readonly owner: string;
}

/** Payload of `lost`. */
export interface LockLostInfo extends LockEventInfo {
  /** Why the lock was lost. */
  readonly reason: LockLostReason;
}

/** Events of {@link LockClient}. */
export interface LockClientEvents {
  /** A lock was acquired or re-entered by `owner`. */
  acquired: [info: LockEventInfo];
  /** One hold of `owner` was released (the lock is free once its last hold is). */
  released: [info: LockEventInfo];
  /** The watchdog renewed a hold (watchdog mode: every third of `watchdogTimeout`). */
  renewed: [info: LockEventInfo];
  /**
   * A held lock was lost (`reason`: deleted, taken, expired, quorum); every Lease of the hold
   * aborts. Without a listener, the first one becomes a process warning (`RLOCK_UNHEARD_LOST`).
   */
  lost: [info: LockLostInfo];
  /**
   * A background failure nobody awaits: a renewal, a release retried in the background, the
   * pub/sub connection. Without a listener, the first one becomes a process warning
   * (`RLOCK_UNHEARD_ERROR`).
   */
  error: [error: unknown];
}

/** What every lock of one client shares; internal, never exported from the package. */
export interface LockCore {
  readonly clientId: string;
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly fairLockWaitTimeoutMs: number;
  readonly redis: RedisConnection;
  readonly scripts: LockScripts;
  /** How scripts publish wake-up notices (known once `ready()` resolved). */
  readonly publish: PublishCommand;
  /** The deployment behind the connection (known once `ready()` resolved). */
  readonly topology: Topology;
  /** `syncReplicas`, if set: acquisitions and renewals WAIT for these acks. */
  readonly syncReplicas: ReplicaAck | undefined;
  readonly waiters: WaiterQueues;
  readonly watchdog: Watchdog;
  /** Every hold of this client, with the holder's clock. */
  readonly holds: Holds;
  readonly events: EventEmitter<LockClientEvents>;
  /** @throws LockClientClosedError once the client is closed. */
  assertOpen(): void;
  /**
   * Resolves once the topology is known: at once for a standalone connection; for a Cluster
   * after one look at the server version (then memoised).
   */
  ready(): Promise<void>;
}
