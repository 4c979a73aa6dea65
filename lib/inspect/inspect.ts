import { toLockError } from '../errors.js';
import { clientIdOfListener, fencedLockKeys, lockKeys, readWriteKeys } from '../keys.js';
import type { RedisPort } from '../redis/port.js';
import inspectLua from '../scripts/inspect-lock.lua';
import type { InspectedKind, LockHolder, LockInspection, QueuedWaiter, WaitingClient } from './types.js';

/** Versioned like the registry's commands: two rlock versions on one connection never swap bodies. */
const INSPECT = { name: 'rlockInspectV1', numberOfKeys: 7, lua: inspectLua } as const;
/** At most this many entries of each set come back from one look (their counts are exact). */
export const INSPECT_LIMIT = 1_000;
/** Tickets below this are arrival numbers from an older rlock, not server times (ms). */
const MIN_TICKET_TIME = 1e12;

/** Every key of a lock an inspection reads (all in the lock's hash slot). */
export interface InspectKeys {
  readonly name: string;
  readonly lock: string;
  readonly waiters: string;
  readonly readWaiters: string;
  readonly queue: string;
  readonly queueTimeouts: string;
  readonly readers: string;
  readonly token: string;
}

/** The keys of lock `name` under `keyPrefix` (lib/keys.ts), whatever its kind. */
export function inspectKeys(keyPrefix: string, name: string): InspectKeys {
  const keys = lockKeys(keyPrefix, name);
  const rw = readWriteKeys(keyPrefix, name);
  return {
    name,
    lock: keys.lock,
    waiters: keys.waiters,
    readWaiters: rw.read.waiters,
    queue: keys.queue,
    queueTimeouts: keys.queueTimeouts,
    readers: rw.readers,
    token: fencedLockKeys(keyPrefix, name).token,
  };
}

/** What the inspect script answered, decoded. */
export interface RawLockState {
  readonly nowMs: number;
  readonly pttl: number;
  readonly fields: ReadonlyMap<string, string>;
  /** owner → end of its read lease, server ms (live ones). */
  readonly readers: readonly (readonly [string, number])[];
  readonly waiters: readonly (readonly [string, number])[];
  readonly readWaiters: readonly (readonly [string, number])[];
  /** waiter id → ticket, head first (live ones). */
  readonly queue: readonly (readonly [string, number])[];
  readonly tokenCounter: number | null;
  readonly readerCount: number;
  readonly waiterCount: number;
  readonly readWaiterCount: number;
  readonly queueCount: number;
}


function pairs(flat: unknown): [string, number][] {
  const list = flat as string[];
  const out: [string, number][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([String(list[i]), Number(list[i + 1])]);
  return out;
}

/**
 * One read-only script call (one round trip, on the lock's node of a Cluster): every key of
 * the lock. A failure from Redis comes out as a LockRedisError (`operation: 'query'`).
 */
export async function readLockState(redis: RedisPort, keys: InspectKeys, limit = INSPECT_LIMIT): Promise<RawLockState> {
  let reply: unknown[];
  try {
    const { lock, waiters, readWaiters, queue, queueTimeouts, readers, token } = keys;
    reply = (await redis.runScript(INSPECT, [lock, waiters, readWaiters, queue, queueTimeouts, readers, token, limit])) as unknown[];
  } catch (error) {
    throw toLockError(error, 'query', keys.name);
  }
  const [nowMs, pttl, fields, readers, waiters, readWaiters, queue, token, readerCount, waiterCount, readWaiterCount, queueCount] = reply;
  const flat = fields as string[];
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(String(flat[i]), String(flat[i + 1]));
  return {
    nowMs: Number(nowMs),
    pttl: Number(pttl),
    fields: map,
    readers: pairs(readers),
    waiters: pairs(waiters),
    readWaiters: pairs(readWaiters),
    queue: pairs(queue),
    tokenCounter: token === null || token === undefined ? null : Number(token),
    readerCount: Number(readerCount),
    waiterCount: Number(waiterCount),
    readWaiterCount: Number(readWaiterCount),
    queueCount: Number(queueCount),
  };
}

/** Hash fields of an exclusive lock that are no owner. */
const NOT_OWNERS = new Set(['waited', 'token']);

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
  if (state.queueCount > 0) return 'fair';
  if (state.pttl !== -2 || state.waiterCount > 0) return 'lock';
  return undefined;
}

/** The holders of an exclusive lock (reentrant, fenced or fair) in one round trip. */
export async function exclusiveHolders(redis: RedisPort, keys: InspectKeys): Promise<LockHolder[]> {
  return exclusiveHoldersOf(await readLockState(redis, keys, 1));
}

/** The holders of one side of a read-write lock (both sides: `mode` undefined) in one round trip. */
export async function readWriteHolders(redis: RedisPort, keys: InspectKeys, mode?: 'read' | 'write'): Promise<LockHolder[]> {
  const holders = readWriteHoldersOf(await readLockState(redis, keys));
  return mode === undefined ? holders : holders.filter((holder) => holder.mode === mode);
}

/** A fair lock's live queue, head first, in one round trip. */
export async function fairQueue(redis: RedisPort, keys: InspectKeys): Promise<QueuedWaiter[]> {
  return queueOf(await readLockState(redis, keys));
}

/**
 * Everything about lock `name` under `keyPrefix` in one round trip (the `rlock inspect` view);
 * undefined when nothing of it is in Redis.
 */
export async function inspectLock(redis: RedisPort, keyPrefix: string, name: string): Promise<LockInspection | undefined> {
  const state = await readLockState(redis, inspectKeys(keyPrefix, name));
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
