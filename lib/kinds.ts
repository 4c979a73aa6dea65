import type { ObjectKind } from './errors.js';
import { exclusiveHolders, readWriteHolders } from './inspect/inspect.js';
import type { InspectKeys } from './keys.js';
import type { InspectedKind, LockHolder } from './inspect/types.js';
import type { InspectScripts } from './scripts/inspect-scripts.js';
import type { MoveKind } from './scripts/lease-move-scripts.js';
import type { RenewScript } from './scripts/script-types.js';

/**
 * The client's factories as adopt needs them (LockClient has them): structural, so this table
 * sits below the lock kinds it names.
 */
export interface KindFactories {
  getLock(name: string): unknown;
  getFairLock(name: string): unknown;
  getFencedLock(name: string): unknown;
  getReadWriteLock(name: string): { readLock(): unknown; writeLock(): unknown };
  getSemaphore(name: string, options: { permits: number; fair: boolean }): unknown;
}

/** What a handle of the kind names beyond its lock: a permit's counts. */
export interface KindHandle {
  readonly name: string;
  readonly limit?: number | undefined;
  readonly fair?: boolean | undefined;
}

/** One kind of hold: everything the layers above ask of it, in one row. */
export interface KindRow {
  /** Which batched watchdog script renews it (RenewalScripts.renewMany). */
  readonly renew: RenewScript;
  /** How the extend, hand-off and adopt scripts name it (LeaseMoveScripts); undefined: it never moves. */
  readonly move: MoveKind | undefined;
  /** What messages and errors call the object it is on. */
  readonly object: ObjectKind;
  /** What `rlock:*` telemetry messages call it. */
  readonly reported: string;
  /**
   * Handed off as a LeaseHandle of this kind, carrying these fields beyond the common ones;
   * undefined: no handle (an election's hold moves through its Leadership).
   */
  readonly handle: { readonly fields: readonly string[] } | undefined;
  /** What `inspect` finds its keys as (InspectedKind; a fair lock's while its queue has a waiter); undefined: not a lock's keys. */
  readonly inspected: InspectedKind | undefined;
  /** The inspect probe for `getHolders()`. */
  readonly holders: ((scripts: InspectScripts, keys: InspectKeys) => Promise<LockHolder[]>) | undefined;
  /** The object a handle of this kind is adopted through (the client's factory). */
  readonly open: ((factories: KindFactories, handle: KindHandle) => unknown) | undefined;
}

const exclusive = (scripts: InspectScripts, keys: InspectKeys): Promise<LockHolder[]> => exclusiveHolders(scripts, keys);

/**
 * Every kind of hold a client records. Adding a kind is a row here plus its scripts (and its
 * factory on LockClient): nothing above switches over kinds.
 */
export const KINDS = {
  lock: {
    renew: 'lock', move: 'lock', object: 'lock', reported: 'lock', handle: { fields: ['token'] }, inspected: 'lock', holders: exclusive,
    open: (f, h) => f.getLock(h.name),
  },
  'fair-lock': {
    renew: 'lock', move: 'lock', object: 'lock', reported: 'fair-lock', handle: { fields: ['token'] }, inspected: 'fair', holders: exclusive,
    open: (f, h) => f.getFairLock(h.name),
  },
  fenced: {
    renew: 'lock', move: 'lock', object: 'lock', reported: 'fenced', handle: { fields: ['token'] }, inspected: 'fenced', holders: exclusive,
    open: (f, h) => f.getFencedLock(h.name),
  },
  read: {
    renew: 'readWrite', move: 'read', object: 'lock', reported: 'read', handle: { fields: [] }, inspected: 'read-write',
    holders: (scripts, keys) => readWriteHolders(scripts, keys, 'read'),
    open: (f, h) => f.getReadWriteLock(h.name).readLock(),
  },
  write: {
    renew: 'readWrite', move: 'write', object: 'lock', reported: 'write', handle: { fields: [] }, inspected: 'read-write',
    holders: (scripts, keys) => readWriteHolders(scripts, keys, 'write'),
    open: (f, h) => f.getReadWriteLock(h.name).writeLock(),
  },
  permit: {
    renew: 'permit', move: 'permit', object: 'semaphore', reported: 'semaphore', handle: { fields: ['permits', 'limit', 'fair'] }, inspected: undefined,
    holders: undefined,
    open: (f, h) => f.getSemaphore(h.name, { permits: h.limit!, fair: h.fair === true }),
  },
  election: {
    renew: 'lock', move: undefined, object: 'lock', reported: 'election', handle: undefined, inspected: undefined, holders: exclusive, open: undefined,
  },
} as const satisfies Record<string, KindRow>;

/** A kind of hold: a row of KINDS. */
export type HoldKind = keyof typeof KINDS;

/** The kinds a handle can carry: those of a hold, and the two composites (a MultiLock's, a RedLock's). */
export type LeaseHandleKind = { [K in HoldKind]: (typeof KINDS)[K]['handle'] extends undefined ? never : K }[HoldKind] | 'multi' | 'redlock';

/** The row of `kind`, or undefined when it is no kind of hold (a composite's, or unknown). */
export function kindRow(kind: string): KindRow | undefined {
  return Object.hasOwn(KINDS, kind) ? (KINDS as Record<string, KindRow>)[kind] : undefined;
}

/** Where a hold of `kind` on the lock at `key` is recorded (Holds): `${kind}\0${key}`. */
export function lockIdOf(kind: HoldKind, key: string): string {
  return `${kind}\u0000${key}`;
}

/** What telemetry calls the kind in a lock id (a RedLock's id names itself). */
export function reportedKindOf(lockId: string): string {
  const kind = lockId.slice(0, lockId.indexOf('\u0000'));
  return kindRow(kind)?.reported ?? kind;
}
