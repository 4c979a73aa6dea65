// Types the script modules share with the code that calls them: their own module, so that the
// registry (which builds the script modules) and the script modules do not import each other.

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

/** How the watchdog renews one hold, with which batched script. */
export interface RenewTarget {
  /** The lock's name, for events. */
  readonly name: string;
  /** The batched script that renews it. */
  readonly script: RenewScript;
  /** The keys that script needs for this hold (all in the lock's hash slot). */
  readonly keys: readonly string[];
  /** Who holds, as the script knows it: the owner id, or `r:`/`w:` + owner id on a read-write lock. */
  readonly holder: string;
}

export type { ReplicaAck } from '../redis/port.js';
export type { PublishCommand } from '../redis/topology.js';
