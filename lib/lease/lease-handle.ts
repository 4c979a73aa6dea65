import { InvalidArgumentError } from '../errors.js';
import { KINDS, kindRow, type HoldKind } from '../kinds.js';

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

/** The fields every handle carries (a MultiLock's too: its members carry the holds). */
const COMMON_FIELDS = ['rlock', 'kind', 'name', 'keyPrefix', 'owner', 'id', 'holdCount', 'leaseTime', 'expiresAt'];

/** The kinds of hold that have a handle (their row of KINDS says so). */
type HandedKind = { [K in HoldKind]: (typeof KINDS)[K]['handle'] extends undefined ? never : K }[HoldKind];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// LeaseHandleKind (public, spelled out for its readers) names those and the two composites, no other: else this fails to compile.
const kindsAgree: Same<HandedKind | 'multi' | 'redlock', LeaseHandleKind> = true;
void kindsAgree;

/**
 * The fields each kind carries besides those: its row of KINDS says (a token where the hold's
 * hash may have one, a permit's counts); a composite carries its members.
 */
function kindFields(kind: LeaseHandleKind): readonly string[] {
  return kind === 'multi' || kind === 'redlock' ? ['members'] : KINDS[kind].handle.fields;
}

/** The kinds a MultiLock's member can be: the locks a MultiLock takes (holds on a lock, with a handle). */
function isMultiMember(kind: LeaseHandleKind): boolean {
  const row = kindRow(kind);
  return row !== undefined && row.object === 'lock' && row.handle !== undefined;
}

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

function kindOf(raw: Record<string, unknown>): LeaseHandleKind {
  const kind = text(raw, 'kind');
  if (kind !== 'multi' && kind !== 'redlock' && kindRow(kind)?.handle === undefined) throw bad(`unknown \`kind\` ${JSON.stringify(kind)}`);
  return kind as LeaseHandleKind;
}

/**
 * Only the fields of its kind: a forged or mixed-up handle (a lock's with `permits`, a permit's
 * with `members`) must not reach Redis. A field set to undefined counts as absent, as JSON drops it.
 */
function checkFields(raw: Record<string, unknown>, kind: LeaseHandleKind): void {
  const accepted = [...COMMON_FIELDS, ...kindFields(kind)];
  for (const [field, value] of Object.entries(raw)) {
    if (value !== undefined && !accepted.includes(field)) throw bad(`a \`${kind}\` handle has no field \`${field}\` (its fields: ${accepted.join(', ')})`);
  }
}

function membersOf(raw: Record<string, unknown>): unknown[] {
  if (!Array.isArray(raw.members) || raw.members.length === 0) throw bad('`members` must be a non-empty array');
  return raw.members;
}

/** Checks a handle (it may have travelled through JSON) before anything is sent to Redis. */
export function checkLeaseHandle(value: unknown): LeaseHandle {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(`got ${value === null ? 'null' : typeof value}`);
  const raw = value as Record<string, unknown>;
  if (raw.rlock !== 1) throw bad('`rlock` must be 1 (a handle from lease.handOff())');
  const kind = kindOf(raw);
  checkFields(raw, kind);
  text(raw, 'name');
  text(raw, 'keyPrefix');
  const owner = text(raw, 'owner');
  text(raw, 'id');
  whole(raw, 'holdCount', 1);
  if (raw.leaseTime !== -1) whole(raw, 'leaseTime', 1);
  if (typeof raw.expiresAt !== 'number' || !Number.isFinite(raw.expiresAt) || raw.expiresAt < 0) throw bad('`expiresAt` must be a time in ms (Date.now())');
  if (kind === 'fenced' || raw.token !== undefined) whole(raw, 'token', 0);
  if (kind === 'multi') {
    const members = membersOf(raw).map(checkLeaseHandle);
    const other = members.find((member) => !isMultiMember(member.kind));
    if (other) throw bad(`a MultiLock member cannot be of kind \`${other.kind}\``);
    return { ...(raw as unknown as LeaseHandle), members };
  }
  if (kind === 'redlock') {
    const members = membersOf(raw).map((member: unknown) => (member === null ? null : checkLeaseHandle(member)));
    if (members.every((member) => member === null)) throw bad('a RedLock handle needs at least one member that is not null');
    if (members.some((member) => member !== null && member.kind !== 'lock')) throw bad('a RedLock member must be of kind `lock`');
    if (members.some((member) => member !== null && member.owner !== owner)) throw bad('a RedLock member must have the owner of the handle');
    return { ...(raw as unknown as LeaseHandle), members };
  }
  if (kind === 'permit') {
    const limit = whole(raw, 'limit', 1);
    if (whole(raw, 'permits', 1) > limit) throw bad(`\`permits\` (${String(raw.permits)}) must not exceed \`limit\` (${limit})`);
    if (typeof raw.fair !== 'boolean') throw bad('`fair` must be a boolean');
    if (raw.holdCount !== 1) throw bad('a permit handle has `holdCount` 1 (its `permits` say how many)');
  }
  return raw as unknown as LeaseHandle;
}
