import type { LockCore } from '../core.js';
import { InvalidArgumentError, LockLostError } from '../errors.js';
import { holdDrift } from './holds.js';
import type { Lease } from './lease.js';
import type { RLock, RReadWriteLock } from '../locks/rlock.js';
import type { Permit } from '../synchronizers/permit.js';
import type { RSemaphore, SemaphoreOptions } from '../synchronizers/semaphore.js';
import { WATCHDOG_LEASE } from '../validate.js';
import { HOLD_ACCESS, type HoldAccess } from './hold-access.js';
import type { LeaseHandle } from './lease-handle.js';
import { capHold } from './max-hold.js';
import { combineLeases } from './combined-lease.js';
import { sharedRequestId } from './lease-moves.js';

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
  return (object as unknown as { [HOLD_ACCESS](): HoldAccess })[HOLD_ACCESS]();
}

function notAdopted(handle: LeaseHandle, why: string): LockLostError {
  return new LockLostError(`the hold of "${handle.name}" cannot be adopted: ${why}`, 'expired', { lockName: handle.name });
}

/**
 * `locks.adopt(handle)` for one hold: takes the handle's one-shot claim in Redis (of two
 * adopters, exactly one gets it), then this client holds the hold as its own: same owner, hold
 * count and fencing token, renewed by its watchdog in watchdog mode (its own `maxHoldTime`
 * counted from now), or kept to its fixed lease.
 */
export async function adoptHandle(core: LockCore, factories: LockFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease | Permit> {
  if (handle.kind === 'multi') return adoptMembers(core, factories, handle, maxHoldMs);
  if (handle.keyPrefix !== core.keyPrefix) {
    throw new InvalidArgumentError(`the handle of "${handle.name}" is for keyPrefix "${handle.keyPrefix}", this client uses "${core.keyPrefix}"`, {
      lockName: handle.name,
    });
  }
  const access = accessFor(factories, handle);
  core.assertOpen();
  await core.ready();
  const watchdog = handle.leaseTime === WATCHDOG_LEASE;
  const target = access.target(handle.owner);
  const sentAt = performance.now();
  const reply = await core.scripts.leaseMoves.adopt(target, watchdog ? core.watchdogTimeoutMs : 0, handle.id, sharedRequestId(core));
  if (typeof reply === 'number') throw notAdopted(handle, 'it was adopted already, or it ended');
  const letGo = access.letGo(handle.owner);
  // An answer that came after the lease it found ran out (by this holder's clock) is no hold.
  if (performance.now() >= sentAt + reply.leftMs - holdDrift(reply.leftMs)) {
    letGo(reply.count);
    throw notAdopted(handle, 'its lease ran out before the adoption was confirmed');
  }
  const hold = core.holds.acquired({ lockId: access.lockId, owner: handle.owner, target, unscoped: false, letGo, sentAt, ttlMs: reply.leftMs, watchdog });
  hold.count = reply.count;
  if (watchdog) core.watchdog.kick();
  capHold(core, hold, maxHoldMs ?? core.maxHoldTimeMs, letGo);
  core.events.emit('acquired', { name: handle.name, owner: handle.owner });
  return access.lease(handle.owner, reply.token ?? handle.token) as Lease | Permit;
}

/**
 * A MultiLock's handle: every member adopted through this client (so all of them must live on its
 * Redis), as one Lease; when one cannot be adopted, those adopted are released and it rejects.
 */
async function adoptMembers(core: LockCore, factories: LockFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease> {
  const results = await Promise.allSettled(handle.members!.map((member) => adoptHandle(core, factories, member, maxHoldMs)));
  const adopted = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value as Lease] : []));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.allSettled(adopted.map((lease) => lease.release()));
    throw failure.reason;
  }
  return combineLeases(handle.name, adopted);
}
