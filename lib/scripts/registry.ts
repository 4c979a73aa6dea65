import { FairLockScripts } from './fair-scripts.js';
import { LeaseMoveScripts } from './lease-move-scripts.js';
import { ExclusiveLockScripts } from './lock-scripts.js';
import { ReadWriteLockScripts } from './read-write-scripts.js';
import { RenewalScripts } from './renewal-scripts.js';
import type { RedisPort } from '../redis/port.js';
import { ScriptRunner } from './script-runner.js';
import { SynchronizerScripts } from './semaphore-scripts.js';

export type { ReadWriteState } from './read-write-scripts.js';

/**
 * How scripts publish a wake-up notice: `publish` (standalone, Sentinel), `spublish` (sharded,
 * one shard only, on a Redis 7 Cluster), or `publish-cluster` (classic PUBLISH on a Cluster,
 * whose receiver count covers one node only and so cannot prove a client gone).
 */
export type PublishCommand = 'publish' | 'spublish' | 'publish-cluster';

/** What a waiting attempt tells the acquire script about this client's other waiters. */
export const WaiterMode = {
  /** A single attempt: no waiter bookkeeping. */
  Single: '0',
  /** Waiting, and other local waiters of this client wait too: stay registered. */
  Shared: '1',
  /** Waiting, and the only local waiter: leave the waiter set on success. */
  Alone: '2',
  /** Shared, for the attempt a wake-up prompted: on failure, back to the front of the set. */
  SharedWoken: '3',
  /** Alone, for the attempt a wake-up prompted: on failure, back to the front of the set. */
  AloneWoken: '4',
} as const;
export type WaiterMode = (typeof WaiterMode)[keyof typeof WaiterMode];

/** Which batched watchdog script renews a hold: a reentrant lock's, a read-write lock's, or a semaphore permit's. */
export type RenewScript = 'lock' | 'readWrite' | 'permit';

export type { ReplicaAck } from '../redis/port.js';

/** Every script rlock runs on one connection, by the kind of lock they serve. */
export class LockScripts {
  readonly lock: ExclusiveLockScripts;
  readonly fair: FairLockScripts;
  readonly readWrite: ReadWriteLockScripts;
  readonly renewal: RenewalScripts;
  readonly synchronizers: SynchronizerScripts;
  /** extend, hand-off and adopt of any kind's hold. */
  readonly leaseMoves: LeaseMoveScripts;

  constructor(port: RedisPort) {
    const runner = new ScriptRunner(port);
    this.lock = new ExclusiveLockScripts(runner);
    this.fair = new FairLockScripts(runner);
    this.readWrite = new ReadWriteLockScripts(runner);
    this.renewal = new RenewalScripts(runner);
    this.synchronizers = new SynchronizerScripts(runner);
    this.leaseMoves = new LeaseMoveScripts(runner);
  }
}
