import type { Lease, LockClient, Permit, RLock } from '../../lib/index.js';

/** Every kind a Lease can be of, and the semaphore's Permit. */
export type MoveKind = 'lock' | 'fair' | 'fenced' | 'read' | 'write' | 'permit';
export const LOCK_KINDS = ['lock', 'fair', 'fenced', 'read', 'write'] as const;
export const ALL_KINDS: MoveKind[] = [...LOCK_KINDS, 'permit'];

export function lockOf(client: LockClient, kind: Exclude<MoveKind, 'permit'>, name: string): RLock {
  if (kind === 'fair') return client.getFairLock(name);
  if (kind === 'fenced') return client.getFencedLock(name);
  if (kind === 'read') return client.getReadWriteLock(name).readLock();
  if (kind === 'write') return client.getReadWriteLock(name).writeLock();
  return client.getLock(name);
}

/** What the specs ask of a Lease or a Permit alike. */
export type Held = Lease | Permit;

/** Takes `name` in `kind` (a permit: all of a 1-permit semaphore), or null when it is taken. */
export async function take(
  client: LockClient,
  kind: MoveKind,
  name: string,
  options: { leaseTime?: number; waitTime?: number; maxHoldTime?: number } = {},
): Promise<Held | null> {
  const waitTime = options.waitTime ?? 0;
  if (kind === 'permit') return client.getSemaphore(name, { permits: 1 }).tryAcquire({ ...options, waitTime });
  return lockOf(client, kind, name)
    .acquire({ ...options, waitTime })
    .catch((error: unknown) => {
      if ((error as Error).name === 'LockAcquireTimeoutError') return null;
      throw error;
    });
}

/** Whether another client can take it now: for a read lock, a writer is the one it excludes. */
export async function takenByOther(client: LockClient, kind: MoveKind, name: string): Promise<boolean> {
  const other = kind === 'read' ? await take(client, 'write', name) : await take(client, kind, name);
  if (!other) return true;
  await other.release();
  return false;
}
