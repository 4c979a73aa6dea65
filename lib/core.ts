import type { EventEmitter } from 'eventemitter3';
import type { LockClientEvents } from './events.js';
import type { LeaseDesk } from './lease/lease-desk.js';
import type { NoticeSubscriber } from './waiting/notice-subscriber.js';
import type { WaiterQueues } from './waiting/waiter-queues.js';
import type { RedisPort } from './redis/port.js';
import type { LockScripts, PublishCommand, ReplicaAck } from './scripts/registry.js';
import type { Topology } from './redis/topology.js';
import type { Holds } from './holding/holds.js';
import type { Watchdog } from './holding/watchdog.js';

export type { LockAcquiredInfo, LockClientEvents, LockEventInfo, LockLostInfo, LockReleasedInfo, LockWarningInfo } from './events.js';

/** What every lock of one client shares; internal, never exported from the package. */
export interface LockCore extends LeaseDesk {
  readonly clientId: string;
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly fairLockWaitTimeoutMs: number;
  /** The client's `maxHoldTime`, ms; undefined: none. */
  readonly maxHoldTimeMs: number | undefined;
  /** The application's connection, behind the port of its client family. */
  readonly redis: RedisPort;
  readonly scripts: LockScripts;
  /** How scripts publish wake-up notices (known once `ready()` resolved). */
  readonly publish: PublishCommand;
  /** The deployment behind the connection (known once `ready()` resolved). */
  readonly topology: Topology;
  /** `syncReplicas`, if set: acquisitions and renewals WAIT for these acks. */
  readonly syncReplicas: ReplicaAck | undefined;
  readonly waiters: WaiterQueues;
  /** The client's pub/sub connection (attached once `ready()` resolved): for channels shared by every client. */
  readonly subscriber: NoticeSubscriber;
  readonly watchdog: Watchdog;
  /** Every hold of this client, with the holder's clock. */
  readonly holds: Holds;
  readonly events: EventEmitter<LockClientEvents>;
  /** @throws LockClientClosedError once the client is closed. */
  assertOpen(): void;
  /**
   * Resolves once the topology is known: at once for a standalone connection; for a Cluster
   * after one look at the server version (then memoised). Undefined once there is nothing to
   * wait for, so the common path awaits nothing.
   */
  ready(): Promise<void> | undefined;
}
