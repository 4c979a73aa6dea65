import { identityKey } from '../keys.js';
import type { LockScripts } from '../scripts/registry.js';
import { inspectLock } from './inspect.js';
import type { LockInspection, ProcessIdentity } from './types.js';

export type { LockInspection } from './types.js';

/** The client id an owner id (`<client id>:<context>`) or a fair waiter id (`<client id>|<n>`) starts with. */
export function clientIdOf(id: string): string {
  const end = id.search(/[:|]/);
  return end < 0 ? id : id.slice(0, end);
}

function decode(value: string | null): ProcessIdentity | null {
  if (value === null) return null;
  try {
    const parsed = JSON.parse(value) as Partial<ProcessIdentity>;
    if (typeof parsed.host !== 'string' || typeof parsed.pid !== 'number' || typeof parsed.startedAt !== 'number') return null;
    const { host, pid, name, startedAt } = parsed;
    return typeof name === 'string' ? { host, pid, name, startedAt } : { host, pid, startedAt };
  } catch {
    return null;
  }
}

/** The process identities of `clientIds` (one read, in the prefix's slot); a client with none is absent. */
export async function readIdentities(scripts: LockScripts, keyPrefix: string, clientIds: Iterable<string>): Promise<Map<string, ProcessIdentity>> {
  const ids = [...new Set(clientIds)];
  const found = new Map<string, ProcessIdentity>();
  if (ids.length === 0) return found;
  const values = await scripts.identities.read(ids.map((id) => identityKey(keyPrefix, id)));
  ids.forEach((id, i) => {
    const identity = decode(values[i] ?? null);
    if (identity) found.set(id, identity);
  });
  return found;
}

/** The client ids of a view's holders and waiters. */
export function clientIdsOf(view: LockInspection): string[] {
  return [
    ...view.holders.map((h) => clientIdOf(h.owner)),
    ...view.queue.map((w) => clientIdOf(w.owner)),
    ...view.waitingClients.map((c) => c.clientId),
    ...view.waitingReaders.map((c) => c.clientId),
  ];
}

/** `view` with each holder's and waiter's `process` (null when unknown) from `identities`. */
export function withProcesses(view: LockInspection, identities: ReadonlyMap<string, ProcessIdentity>): LockInspection {
  const of = (clientId: string): ProcessIdentity | null => identities.get(clientId) ?? null;
  return {
    ...view,
    holders: view.holders.map((h) => ({ ...h, process: of(clientIdOf(h.owner)) })),
    queue: view.queue.map((w) => ({ ...w, process: of(clientIdOf(w.owner)) })),
    waitingClients: view.waitingClients.map((c) => ({ ...c, process: of(c.clientId) })),
    waitingReaders: view.waitingReaders.map((c) => ({ ...c, process: of(c.clientId) })),
  };
}

/**
 * Everything about lock `name` (see inspectLock) with the process of each holder and waiter: two
 * reads, the lock's keys then the identities. Undefined when nothing of the lock is in Redis.
 */
export async function inspectWithProcesses(scripts: LockScripts, keyPrefix: string, name: string): Promise<LockInspection | undefined> {
  const view = await inspectLock(scripts.inspect, keyPrefix, name);
  if (!view) return undefined;
  return withProcesses(view, await readIdentities(scripts, keyPrefix, clientIdsOf(view)));
}

/** A process for people: `host pid name`, or `unknown process`. */
export function describeProcess(identity: ProcessIdentity | null | undefined): string {
  if (!identity) return 'unknown process';
  return identity.name === undefined ? `${identity.host} ${identity.pid}` : `${identity.host} ${identity.pid} ${identity.name}`;
}
