import { InvalidArgumentError } from '../errors.js';

/** The kinds of hold a {@link LeaseHandle} can carry. */
export type LeaseHandleKind = 'lock' | 'fair-lock' | 'fenced' | 'read' | 'write' | 'permit' | 'multi' | 'redlock';

/**
 * A hold on its way to another process: what `lease.handOff()` returns and `locks.adopt(handle)`
 * takes (a RedLock's, kind `redlock`: `redLock.adopt(handle)`). A plain JSON-serialisable object
 * (`JSON.stringify` it into a job, a message, an HTTP body); adopt it before `expiresAt`. It can
 * be adopted once: a second `adopt`, in any process, rejects with LockLostError.
 */
export interface LeaseHandle {
  /** The format of this object. */
  readonly rlock: 1;
  /** The lock kind (or `permit`; `multi`: a MultiLock's members; `redlock`: a RedLock's node holds). */
  readonly kind: LeaseHandleKind;
  /** The lock's (or semaphore's) name. */
  readonly name: string;
  /** The `keyPrefix` of the client that handed it off: the adopting client must use the same. */
  readonly keyPrefix: string;
  /** The owner id of the hold (a permit's id): the adopting Lease keeps it. */
  readonly owner: string;
  /** The one-shot claim this handle opened in Redis. */
  readonly id: string;
  /** The hold count the owner had. */
  readonly holdCount: number;
  /** -1: watchdog mode (the adopter's watchdog renews it); else the hold keeps its fixed lease. */
  readonly leaseTime: number;
  /** Wall-clock ms (Date.now()) after which the hold may have ended: adopt before. */
  readonly expiresAt: number;
  /** A fenced lock's token. */
  readonly token?: number;
  /** A permit: how many permits it holds. */
  readonly permits?: number;
  /** A permit: its semaphore's limit (the adopting client makes the semaphore with it). */
  readonly limit?: number;
  /** A permit: whether its semaphore is fair. */
  readonly fair?: boolean;
  /**
   * A MultiLock: one handle per member, in the order they were taken. A RedLock: one per node, in
   * the order of its locks; null for a node that did not hand a hold off.
   */
  readonly members?: readonly (LeaseHandle | null)[];
}

const KINDS = new Set<string>(['lock', 'fair-lock', 'fenced', 'read', 'write', 'permit', 'multi', 'redlock']);

function bad(what: string): InvalidArgumentError {
  return new InvalidArgumentError(`\`handle\` is not a LeaseHandle: ${what}`);
}

function text(raw: Record<string, unknown>, field: string): string {
  const value = raw[field];
  if (typeof value !== 'string' || value.length === 0) throw bad(`\`${field}\` must be a non-empty string`);
  return value;
}

function whole(raw: Record<string, unknown>, field: string, min: number): number {
  const value = raw[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw bad(`\`${field}\` must be a whole number ≥ ${min}`);
  return value;
}

/** Checks a handle (it may have travelled through JSON) before anything is sent to Redis. */
export function checkLeaseHandle(value: unknown): LeaseHandle {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(`got ${value === null ? 'null' : typeof value}`);
  const raw = value as Record<string, unknown>;
  if (raw.rlock !== 1) throw bad('`rlock` must be 1 (a handle from lease.handOff())');
  const kind = text(raw, 'kind');
  if (!KINDS.has(kind)) throw bad(`unknown \`kind\` ${JSON.stringify(kind)}`);
  if (kind === 'multi') {
    text(raw, 'name');
    if (!Array.isArray(raw.members) || raw.members.length === 0) throw bad('`members` must be a non-empty array');
    return { ...(raw as unknown as LeaseHandle), members: raw.members.map(checkLeaseHandle) };
  }
  text(raw, 'name');
  text(raw, 'keyPrefix');
  text(raw, 'owner');
  text(raw, 'id');
  whole(raw, 'holdCount', 1);
  if (raw.leaseTime !== -1) whole(raw, 'leaseTime', 1);
  if (typeof raw.expiresAt !== 'number' || !Number.isFinite(raw.expiresAt)) throw bad('`expiresAt` must be a number');
  if (raw.token !== undefined) whole(raw, 'token', 0);
  if (kind === 'redlock') {
    if (!Array.isArray(raw.members) || raw.members.length === 0) throw bad('`members` must be a non-empty array');
    const members = raw.members.map((member: unknown) => (member === null ? null : checkLeaseHandle(member)));
    if (members.some((member) => member !== null && member.kind !== 'lock')) throw bad('a RedLock member must be of kind `lock`');
    return { ...(raw as unknown as LeaseHandle), members };
  }
  if (kind === 'permit') {
    whole(raw, 'permits', 1);
    whole(raw, 'limit', 1);
    if (typeof raw.fair !== 'boolean') throw bad('`fair` must be a boolean');
  }
  return raw as unknown as LeaseHandle;
}
