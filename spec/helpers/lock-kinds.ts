import type { LockClient, RLock } from '../../lib/index.js';

/** The exclusive-or-shared lock kinds a spec runs over, by name. */
export type Kind = 'lock' | 'fenced' | 'fair' | 'read' | 'write';
export const KINDS: Kind[] = ['lock', 'fenced', 'fair', 'read', 'write'];

/** Lock `name` of `kind` on `client`. */
export function lockOf(client: LockClient, kind: Kind, name: string): RLock {
  if (kind === 'fenced') return client.getFencedLock(name);
  if (kind === 'fair') return client.getFairLock(name);
  if (kind === 'read') return client.getReadWriteLock(name).readLock();
  if (kind === 'write') return client.getReadWriteLock(name).writeLock();
  return client.getLock(name);
}
