import { clientIdOfListener, inspectKeys, type InspectKeys } from '../keys.js';
import type { InspectScripts, RawLockState } from '../scripts/inspect-scripts.js';
import type { InspectedKind, LockHolder, LockInspection, QueuedWaiter, WaitingClient } from './types.js';

/** Tickets below this are arrival numbers from an older rlock, not server times (ms). */
const MIN_TICKET_TIME = 1e12;

/** Hash fields of an exclusive lock that are no owner: a fenced lock's token, a fair lock's mark. */
const NOT_OWNERS = new Set(['waited', 'token', 'fair']);

/** The holders of an exclusive lock's hash (reentrant, fenced, fair): owner → hold count, one TTL. */
export function exclusiveHoldersOf(state: RawLockState): LockHolder[] {
  if (state.pttl === -2) return [];
  const tokenField = state.fields.get('token');
  const token = tokenField === undefined ? undefined : Number(tokenField);
  const holders: LockHolder[] = [];
  for (const [field, value] of state.fields) {
    if (NOT_OWNERS.has(field)) continue;
    holders.push(token === undefined ? { owner: field, holdCount: Number(value), ttl: state.pttl } : { owner: field, holdCount: Number(value), ttl: state.pttl, token });
  }
  return holders;
}

/** The holders of a read-write lock: the writer first (if its lease runs), then each reader. */
export function readWriteHoldersOf(state: RawLockState): LockHolder[] {
  const holders: LockHolder[] = [];
  const writer = state.fields.get('writer');
  const writeEnds = Number(state.fields.get('wuntil') ?? 0);
  if (writer !== undefined && writeEnds > state.nowMs) {
    holders.push({ owner: writer, holdCount: Number(state.fields.get('writes') ?? 0), ttl: writeEnds - state.nowMs, mode: 'write' });
  }
  for (const [owner, ends] of state.readers) {
    const count = Number(state.fields.get(`r:${owner}`) ?? 0);
    if (count > 0) holders.push({ owner, holdCount: count, ttl: ends - state.nowMs, mode: 'read' });
  }
  return holders;
}

/** A fair waiter id as reported: `<client id>|<n>` (Redis has the client's listener id, keys.ts). */
function reportedWaiterId(waiterId: string): string {
  const bar = waiterId.indexOf('|');
  return bar < 0 ? waiterId : clientIdOfListener(waiterId.slice(0, bar)) + waiterId.slice(bar);
}

/** A fair lock's live queue, head first. */
export function queueOf(state: RawLockState): QueuedWaiter[] {
  return state.queue.map(([id, ticket]) => ({ owner: reportedWaiterId(id), waitedMs: ticket >= MIN_TICKET_TIME ? Math.max(0, state.nowMs - ticket) : -1 }));
}

function waitingOf(entries: RawLockState['waiters'], nowMs: number): WaitingClient[] {
  return entries.map(([id, since]) => ({ clientId: clientIdOfListener(id), waitedMs: Math.max(0, nowMs - since) }));
}

/** The kind a lock's keys show, or undefined when nothing of it is in Redis. */
export function kindOf(state: RawLockState): InspectedKind | undefined {
  const { fields } = state;
  if (fields.has('writer') || [...fields.keys()].some((field) => field.startsWith('r:')) || state.readerCount > 0 || state.readWaiterCount > 0) {
    return 'read-write';
  }
  if (state.tokenCounter !== null || fields.has('token')) return 'fenced';
  if (state.queueCount > 0 || fields.has('fair')) return 'fair';
  if (state.pttl !== -2 || state.waiterCount > 0) return 'lock';
  return undefined;
}

/** The holders of an exclusive lock (reentrant, fenced or fair) in one round trip. */
export async function exclusiveHolders(scripts: InspectScripts, keys: InspectKeys): Promise<LockHolder[]> {
  return exclusiveHoldersOf(await scripts.read(keys, 1));
}

/** The holders of one side of a read-write lock (both sides: `mode` undefined) in one round trip. */
export async function readWriteHolders(scripts: InspectScripts, keys: InspectKeys, mode?: 'read' | 'write'): Promise<LockHolder[]> {
  const holders = readWriteHoldersOf(await scripts.read(keys));
  return mode === undefined ? holders : holders.filter((holder) => holder.mode === mode);
}

/** A fair lock's live queue, head first, in one round trip. */
export async function fairQueue(scripts: InspectScripts, keys: InspectKeys): Promise<QueuedWaiter[]> {
  return queueOf(await scripts.read(keys));
}

/**
 * Everything about lock `name` under `keyPrefix` in one round trip (the `rlock inspect` view);
 * undefined when nothing of it is in Redis.
 */
export async function inspectLock(scripts: InspectScripts, keyPrefix: string, name: string): Promise<LockInspection | undefined> {
  const state = await scripts.read(inspectKeys(keyPrefix, name));
  const kind = kindOf(state);
  if (kind === undefined) return undefined;
  return {
    name,
    kind,
    holders: kind === 'read-write' ? readWriteHoldersOf(state) : exclusiveHoldersOf(state),
    ttl: state.pttl,
    queue: queueOf(state),
    queueLength: state.queueCount,
    waitingClients: waitingOf(state.waiters, state.nowMs),
    waitingClientCount: state.waiterCount,
    waitingReaders: waitingOf(state.readWaiters, state.nowMs),
    waitingReaderCount: state.readWaiterCount,
    lastToken: state.tokenCounter,
  };
}
