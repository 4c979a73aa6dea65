/**
 * Every Redis key and channel of one lock. They all start with `{<prefix>:<name>}`, so the
 * Cluster hash tag is the same for all of them whatever braces the name itself contains
 * (the tag ends at the first `}` after our opening brace, which lies in the shared start),
 * and the tag is never empty because the prefix is not.
 */
export interface LockKeys {
  /** The lock's name as the user gave it. */
  readonly name: string;
  /** Hash: owner id → hold count; its TTL is the lease. */
  readonly lock: string;
  /** Sorted set of the listener ids of the clients waiting for the lock, scored by first registration (server ms). */
  readonly waiters: string;
  /** Wake-up channel of one client: this prefix + its listener id ({@link listenerId}). */
  readonly wakePrefix: string;
  /** Fair lock: sorted set of waiting calls (waiter ids) → ticket, in arrival order. */
  readonly queue: string;
  /** Fair lock: sorted set of waiting calls → server time (ms) when they lose their place. */
  readonly queueTimeouts: string;
  /** Fair lock: "your turn" channel of one client: this prefix + its listener id. */
  readonly turnPrefix: string;
  /**
   * Prefix of the short-lived records that answer a resent call whose hold is gone: the final
   * releases of one client (`r:` + client id, one key per lock and client, ended-holds.lua) or a
   * forceUnlock (`f:` + request id). The scripts of the plain and fenced lock derive it from the
   * lock key (`lock` + ':rec:'), and the wake prefix likewise (`lock` + ':wake:').
   */
  readonly records: string;
}

/** Ends the listener id of a client that listens by classic pub/sub on a Cluster; notice.lua reads it. */
export const CLASSIC_LISTENER = '~c';

/**
 * The id a client waits under: the member it registers in waiter sets, the client part of its
 * fair waiter ids, the end of its wake and turn channels. It is the client id, marked when the
 * client listens by classic pub/sub on a Cluster (iovalkey, `pubsub: 'classic'`), so that a
 * release from a client of any family publishes each notice the way its waiter listens: SPUBLISH
 * where the Cluster has it, PUBLISH to a marked client and everywhere else (notice.lua). The
 * clients that listen sharded, most of them, keep the plain client id, as earlier versions did.
 */
export function listenerId(clientId: string, classicOnCluster: boolean): string {
  return classicOnCluster ? clientId + CLASSIC_LISTENER : clientId;
}

/** The client id a listener id (or a fair waiter id's client part) names: what inspection reports. */
export function clientIdOfListener(id: string): string {
  return id.endsWith(CLASSIC_LISTENER) ? id.slice(0, -CLASSIC_LISTENER.length) : id;
}

// A lock object is made per call as often as not (`getLock(name)` per request): the key names of
// the names in use are built once and kept, up to KEYS_KEPT names per prefix (then started over).
const KEYS_KEPT = 1_000;
const keptKeys = new Map<string, Map<string, LockKeys>>();

export function lockKeys(keyPrefix: string, name: string): LockKeys {
  let byName = keptKeys.get(keyPrefix);
  if (!byName) keptKeys.set(keyPrefix, (byName = new Map<string, LockKeys>()));
  let keys = byName.get(name);
  if (!keys) {
    if (byName.size >= KEYS_KEPT) byName.clear();
    keys = newLockKeys(keyPrefix, name);
    byName.set(name, keys);
  }
  return keys;
}

function newLockKeys(keyPrefix: string, name: string): LockKeys {
  const base = `{${keyPrefix}:${name}}`;
  return Object.freeze({
    name,
    lock: base,
    waiters: `${base}:waiters`,
    wakePrefix: `${base}:wake:`,
    queue: `${base}:queue`,
    queueTimeouts: `${base}:timeouts`,
    turnPrefix: `${base}:turn:`,
    records: `${base}:rec:`,
  });
}

/** The keys of a fenced lock: a reentrant lock's, plus its token counter. */
export interface FencedLockKeys extends LockKeys {
  /** Integer incremented by every acquisition from unlocked; never expires (the only key that stays). */
  readonly token: string;
}

export function fencedLockKeys(keyPrefix: string, name: string): FencedLockKeys {
  const keys = lockKeys(keyPrefix, name);
  return { ...keys, token: `${keys.lock}:token` };
}

/** Where a client waits for a lock (or for one side of a read-write lock), and how it is woken. */
export interface WaitTarget {
  readonly name: string;
  /** The lock's main key: while it exists the lock is held, so a wake-up is not handed on. */
  readonly lock: string;
  /** The waiter set this client registers in while it waits. */
  readonly waiters: string;
  /** Its wake-up channel: this prefix + the client's listener id. */
  readonly wakePrefix: string;
  /** Waiter set and channel prefix of the clients an unusable wake-up is handed on to. */
  readonly handOnWaiters: string;
  readonly handOnWakePrefix: string;
  /** One notice wakes every local waiter (they can all hold the lock at once), not one. */
  readonly wakeAll: boolean;
}

const exclusiveWaits = new WeakMap<LockKeys, WaitTarget>();

/** Waiting for an exclusive lock: a wake-up nobody here can use goes to the next client in line. */
export function exclusiveWait(keys: LockKeys): WaitTarget {
  let target = exclusiveWaits.get(keys);
  if (!target) {
    const { name, lock, waiters, wakePrefix } = keys;
    target = { name, lock, waiters, wakePrefix, handOnWaiters: waiters, handOnWakePrefix: wakePrefix, wakeAll: false };
    exclusiveWaits.set(keys, target);
  }
  return target;
}

/** The keys of a read-write lock (layout: lib/scripts/read-write-holds.lua). */
export interface ReadWriteKeys {
  readonly name: string;
  /** Hash: the writer, its hold count and lease end, and each reader's hold count. */
  readonly lock: string;
  /** Sorted set: reader owner id → end of its read lease (server ms). */
  readonly readers: string;
  /** Records that answer resent calls whose hold is gone (see {@link LockKeys.records}). */
  readonly records: string;
  /** Readers wait apart from writers: a write release wakes all of them at once. */
  readonly read: WaitTarget;
  /** Writers wait as for an exclusive lock: one is woken when the lock frees. */
  readonly write: WaitTarget;
}

export function readWriteKeys(keyPrefix: string, name: string): ReadWriteKeys {
  const keys = lockKeys(keyPrefix, name);
  const write = exclusiveWait(keys);
  return {
    name,
    lock: keys.lock,
    readers: `${keys.lock}:readers`,
    records: keys.records,
    read: {
      ...write,
      waiters: `${keys.lock}:read-waiters`,
      wakePrefix: `${keys.lock}:read-wake:`,
      // The other waiting readers were woken too; only a writer can use a wake-up a reader drops.
      wakeAll: true,
    },
    write,
  };
}

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

/** The keys of lock `name` under `keyPrefix`, whatever its kind. */
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

/** Every key and channel of one election; all share the `{<prefix>:<name>}` hash tag. */
export interface ElectionKeys {
  readonly name: string;
  /** Hash: the leader's owner id → 1, its call log, 'epoch', 'value', 'rev'; TTL = the lease. */
  readonly election: string;
  /** Integer: the last epoch given; never expires, so epochs only grow. */
  readonly epoch: string;
  /** Channel every observing client subscribes to (election-announce.lua). */
  readonly changes: string;
  /** Campaigners wait as for an exclusive lock: one client is woken when the leader steps down. */
  readonly wait: WaitTarget;
  /** Records answering a resent resign whose hold is gone. */
  readonly records: string;
}

export function electionKeys(keyPrefix: string, name: string): ElectionKeys {
  const base = `{${keyPrefix}:${name}}:election`;
  const waiters = `${base}:waiters`;
  const wakePrefix = `${base}:wake:`;
  return {
    name,
    election: base,
    epoch: `${base}:epoch`,
    changes: `${base}:changes`,
    wait: { name, lock: base, waiters, wakePrefix, handOnWaiters: waiters, handOnWakePrefix: wakePrefix, wakeAll: false },
    records: `${base}:rec:`,
  };
}

/** Every key and channel of one semaphore; all share the `{<prefix>:<name>}` hash tag. */
export interface SemaphoreKeys {
  readonly name: string;
  /** Sorted set of the permits out (semaphore.lua). */
  readonly permits: string;
  /**
   * Non-fair: waiting clients and the promises made to woken clients (semaphore.lua), the need
   * hints other than '1,1', their wake-up channel prefix.
   */
  readonly waiters: string;
  readonly needs: string;
  readonly wakePrefix: string;
  /** Non-fair: how many permits a promise of more than one holds. */
  readonly promises: string;
  /** Fair: queue of waiting calls, their timeouts, their turn channel prefix. */
  readonly queue: string;
  readonly timeouts: string;
  readonly turnPrefix: string;
}

export function semaphoreKeys(keyPrefix: string, name: string): SemaphoreKeys {
  const base = `{${keyPrefix}:${name}}:semaphore`;
  return {
    name,
    permits: base,
    waiters: `${base}:waiters`,
    needs: `${base}:needs`,
    wakePrefix: `${base}:wake:`,
    promises: `${base}:promises`,
    queue: `${base}:queue`,
    timeouts: `${base}:timeouts`,
    turnPrefix: `${base}:turn:`,
  };
}

/** Every key and channel of one count-down latch; all share the `{<prefix>:<name>}` hash tag. */
export interface LatchKeys {
  readonly name: string;
  /** Hash: 'count' -> count left; absent when unset or counted down. */
  readonly latch: string;
  readonly waiters: string;
  readonly wakePrefix: string;
  /** Records answering resent calls ('l:' + request id), a minute each. */
  readonly records: string;
}

export function latchKeys(keyPrefix: string, name: string): LatchKeys {
  const base = `{${keyPrefix}:${name}}:latch`;
  return { name, latch: base, waiters: `${base}:waiters`, wakePrefix: `${base}:wake:`, records: `{${keyPrefix}:${name}}:rec:` };
}

/**
 * The record a lease move of one hold writes (extend 'x', hand-off and adopt 'h'): under the
 * hold's main key, so in its hash slot.
 */
export function holdRecordKey(mainKey: string, move: 'x' | 'h', holder: string): string {
  return `${mainKey}:rec:${move}:${holder}`;
}

/**
 * A client's process identity (host, pid, name), written while it holds or waits
 * (process-identity.ts). Under `{<prefix>:}`: one slot for every client of a prefix, so one read
 * finds them all, and never a lock's (a lock name is never empty); the ACL pattern
 * `{<prefix>:*` covers it.
 */
export function identityKey(keyPrefix: string, clientId: string): string {
  return `{${keyPrefix}:}:client:${clientId}`;
}
