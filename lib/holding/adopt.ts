import type { LockCore } from '../core.js';
import { InvalidArgumentError, LockLostError } from '../errors.js';
import { holdDrift, type Hold } from './holds.js';
import type { Lease } from './lease.js';
import type { RLock, RReadWriteLock } from '../locks/rlock.js';
import type { Permit } from '../synchronizers/permit.js';
import type { RSemaphore, SemaphoreOptions } from '../synchronizers/semaphore.js';
import { WATCHDOG_LEASE } from '../validate.js';
import { HOLD_ACCESS, type HoldAccess } from './hold-access.js';
import type { LeaseHandle } from './lease-handle.js';
import { recordHold } from './record-hold.js';
import { combineLeases } from './combined-lease.js';

/** The client's factories: adopt finds the kind a handle names through them. */
export interface LockFactories {
  getLock(name: string): RLock;
  getFairLock(name: string): RLock;
  getFencedLock(name: string): RLock;
  getReadWriteLock(name: string): RReadWriteLock;
  getSemaphore(name: string, options: SemaphoreOptions): RSemaphore;
}

function accessFor(factories: LockFactories, handle: LeaseHandle): HoldAccess {
  const { name } = handle;
  const object =
    handle.kind === 'lock' ? factories.getLock(name)
    : handle.kind === 'fair-lock' ? factories.getFairLock(name)
    : handle.kind === 'fenced' ? factories.getFencedLock(name)
    : handle.kind === 'read' ? factories.getReadWriteLock(name).readLock()
    : handle.kind === 'write' ? factories.getReadWriteLock(name).writeLock()
    : factories.getSemaphore(name, { permits: handle.limit!, fair: handle.fair === true });
  return holdAccessOf(object);
}

function notAdopted(handle: LeaseHandle, why: string): LockLostError {
  return new LockLostError(`the hold of "${handle.name}" cannot be adopted: ${why}`, 'expired', { lockName: handle.name });
}

/** One hold adopted into a client's records. */
export interface AdoptedHold {
  readonly hold: Hold;
  readonly token: number | undefined;
  /** Releases `count` holds of the owner in the background (see Hold.letGo). */
  readonly letGo: (count: number) => void;
}

/**
 * Takes the handle's one-shot claim in Redis (of two adopters, exactly one gets it) and counts the
 * hold in `core`'s records: same owner and hold count, renewed by its watchdog in watchdog mode,
 * or kept to its fixed lease, capped at `maxHoldMs`. `quiet`: a RedLock's node hold (renewed at most
 * `maxRenewals` times).
 * @throws LockLostError when the hold ended, or was adopted already.
 */
export async function adoptHold(
  core: LockCore,
  access: HoldAccess,
  handle: LeaseHandle,
  how: { quiet?: boolean; maxRenewals?: number | undefined; maxHoldMs?: number | undefined } = {},
): Promise<AdoptedHold> {
  core.assertOpen();
  await core.ready();
  const watchdog = handle.leaseTime === WATCHDOG_LEASE;
  const target = access.target(handle.owner);
  const sentAt = performance.now();
  const renewMs = watchdog ? core.watchdogTimeoutMs : 0;
  const reply = await core.scripts.requests.send(target.keys[0]!, handle.owner, (request) => core.scripts.leaseMoves.adopt(target, renewMs, handle.id, request));
  if (typeof reply === 'number') throw notAdopted(handle, 'it was adopted already, or it ended');
  const letGo = access.letGo(handle.owner);
  // An answer that came after the lease it found ran out (by this holder's clock) is no hold.
  if (performance.now() >= sentAt + reply.leftMs - holdDrift(reply.leftMs)) {
    letGo(reply.count);
    throw notAdopted(handle, 'its lease ran out before the adoption was confirmed');
  }
  const acquisition = { lockId: access.lockId, owner: handle.owner, target, unscoped: false, quiet: how.quiet, maxRenewals: how.maxRenewals, letGo, sentAt, ttlMs: reply.leftMs, watchdog };
  const hold = recordHold(core, acquisition, how.maxHoldMs);
  hold.count = reply.count;
  return { hold, token: reply.token ?? handle.token, letGo };
}

/** The HoldAccess of a lock (or semaphore) of this or another loaded copy of rlock. */
export function holdAccessOf(object: unknown): HoldAccess {
  return (object as { [HOLD_ACCESS](): HoldAccess })[HOLD_ACCESS]();
}

/**
 * `locks.adopt(handle)` for one hold (see adoptHold): this client holds it as its own, with its
 * own `maxHoldTime` counted from now.
 */
export function adoptHandle(core: LockCore, factories: LockFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease | Permit> {
  try {
    checkAdoptable(core, handle);
  } catch (error) {
    return Promise.reject(error);
  }
  return adoptChecked(core, factories, handle, maxHoldMs);
}

/** Whether `core`'s client can adopt the handle, every member of a MultiLock's before any is adopted. */
function checkAdoptable(core: LockCore, handle: LeaseHandle): void {
  if (handle.kind === 'redlock') {
    throw new InvalidArgumentError(
      `the handle of "${handle.name}" is a RedLock's: one client cannot reach its other masters; adopt it with redLock.adopt(handle) on a RedLock over the same nodes`,
      { lockName: handle.name },
    );
  }
  if (handle.kind === 'multi') {
    for (const member of handle.members!) checkAdoptable(core, member!);
    return;
  }
  if (handle.keyPrefix !== core.keyPrefix) {
    throw new InvalidArgumentError(`the handle of "${handle.name}" is for keyPrefix "${handle.keyPrefix}", this client uses "${core.keyPrefix}"`, {
      lockName: handle.name,
    });
  }
}

async function adoptChecked(core: LockCore, factories: LockFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease | Permit> {
  if (handle.kind === 'multi') return adoptMembers(core, factories, handle, maxHoldMs);
  const access = accessFor(factories, handle);
  const { token } = await adoptHold(core, access, handle, { maxHoldMs: maxHoldMs ?? core.maxHoldTimeMs });
  core.events.emit('acquired', { name: handle.name, owner: handle.owner });
  return access.lease(handle.owner, token) as Lease | Permit;
}

/**
 * A MultiLock's handle: every member adopted through this client (so all of them must live on its
 * Redis), as one Lease; when one cannot be adopted, those adopted are released and it rejects.
 */
async function adoptMembers(core: LockCore, factories: LockFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease> {
  const results = await Promise.allSettled(handle.members!.map((member) => adoptChecked(core, factories, member!, maxHoldMs)));
  const adopted = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value as Lease] : []));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.allSettled(adopted.map((lease) => lease.release()));
    throw failure.reason;
  }
  return combineLeases(handle.name, adopted);
}
