import type { LockCore } from '../core.js';
import { contextOfOwner } from '../holding/hold-calls.js';
import { RedHold } from './red-hold.js';

/** What a RedLock's holds need to know of it. */
export interface RedLockIdentity {
  readonly name: string;
  /** Names the RedLock's nodes: RedLocks built over the same locks share their holds. */
  readonly id: string;
  readonly nodeCount: number;
  readonly quorum: number;
  readonly maxRenewals: number | undefined;
  /** The first lock's client: it names owners and receives the events. */
  readonly home: LockCore;
}

/**
 * Holds of every RedLock in this process, by the RedLock's nodes and the owner: RedLocks built
 * over the same locks share them, as plain locks share their Redis hash.
 */
const holds = new Map<string, RedHold>();

const holdKey = (lock: RedLockIdentity, owner: string): string => `${lock.id}\u0000${owner}`;

/** Where the RedLock's holds taken outside any lock context are listed in its home client. */
export const unscopedKeyOf = (lock: RedLockIdentity): string => `redlock\u0000${lock.id}`;

/** `owner`'s live hold of the RedLock in this process, if any. */
export function redHoldOf(lock: RedLockIdentity, owner: string): RedHold | undefined {
  return holds.get(holdKey(lock, owner));
}

/** `owner`'s hold of the RedLock in this process, made (with no holds yet) when there is none. */
export function redHoldFor(lock: RedLockIdentity, owner: string): RedHold {
  const key = holdKey(lock, owner);
  const known = holds.get(key);
  if (known) return known;
  const { name, home } = lock;
  const hold = new RedHold({
    lockName: name,
    nodes: lock.nodeCount,
    quorum: lock.quorum,
    maxRenewals: lock.maxRenewals,
    whenHomeCloses: (onClose) => home.holds.whenClosed(onClose),
    renewed: () => void home.events.emit('renewed', { name, owner }),
    lost: (reason) => void home.events.emit('lost', { name, owner, reason }),
    forget: (ended) => {
      if (holds.get(key) !== ended) return;
      holds.delete(key);
      // A hold left to expire is forgotten with its owner: nothing grows with unreleased holds.
      home.holds.unscoped.forget(unscopedKeyOf(lock), owner);
    },
  });
  // Made synchronously with the acquisition's answer, in the caller's context (none for an adopter).
  hold.context = contextOfOwner(home.clientId, owner);
  holds.set(key, hold);
  return hold;
}
