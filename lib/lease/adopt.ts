import type { LockCore } from '../core.js';
import { InvalidArgumentError, LockLostError } from '../errors.js';
import { holdDrift, type Hold } from '../holding/holds.js';
import { kindRow, type KindFactories } from '../kinds.js';
import { ownerHoldsOf, type OwnerHolds } from '../owner-calls.js';
import type { Lease } from './lease.js';
import type { Permit } from '../synchronizers/permit.js';
import { WATCHDOG_LEASE } from '../validate.js';
import type { LeaseHandle } from './lease-handle.js';
import { recordHold } from '../holding/record-hold.js';
import { combineLeases } from './combine-leases.js';

/** The holds by owner of the object a handle names, made through the client's factory (its row of KINDS). */
function holdsFor(factories: KindFactories, handle: LeaseHandle): OwnerHolds {
  const open = kindRow(handle.kind)?.open;
  const holds = open ? ownerHoldsOf(open(factories, handle)) : undefined;
  if (!holds) throw new InvalidArgumentError(`a handle of kind \`${handle.kind}\` cannot be adopted here`, { lockName: handle.name });
  return holds;
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
  access: OwnerHolds,
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
  if (typeof reply !== 'object') throw notAdopted(handle, 'it was adopted already, or it ended');
  const letGo = access.letGo(handle.owner);
  // An answer that came after the lease it found ran out (by this holder's clock) is no hold.
  if (performance.now() >= sentAt + reply.leftMs - holdDrift(reply.leftMs)) {
    letGo(reply.count);
    throw notAdopted(handle, 'its lease ran out before the adoption was confirmed');
  }
  const acquisition = { kind: access.kind, lockId: access.lockId, owner: handle.owner, target, unscoped: false, quiet: how.quiet, maxRenewals: how.maxRenewals, letGo, sentAt, ttlMs: reply.leftMs, watchdog, count: reply.count };
  const hold = recordHold(core, acquisition, how.maxHoldMs);
  return { hold, token: reply.token ?? handle.token, letGo };
}

/**
 * `locks.adopt(handle)` for one hold (see adoptHold): this client holds it as its own, with its
 * own `maxHoldTime` counted from now.
 */
export function adoptHandle(core: LockCore, factories: KindFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease | Permit> {
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

async function adoptChecked(core: LockCore, factories: KindFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease | Permit> {
  if (handle.kind === 'multi') return adoptMembers(core, factories, handle, maxHoldMs);
  const access = holdsFor(factories, handle);
  const { token } = await adoptHold(core, access, handle, { maxHoldMs: maxHoldMs ?? core.maxHoldTimeMs });
  core.events.emit('acquired', { name: handle.name, owner: handle.owner });
  return access.lease(handle.owner, token) as Lease | Permit;
}

/**
 * A MultiLock's handle: every member adopted through this client (so all of them must live on its
 * Redis), as one Lease; when one cannot be adopted, those adopted are released and it rejects.
 */
async function adoptMembers(core: LockCore, factories: KindFactories, handle: LeaseHandle, maxHoldMs: number | undefined): Promise<Lease> {
  const results = await Promise.allSettled(handle.members!.map((member) => adoptChecked(core, factories, member!, maxHoldMs)));
  const adopted = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value as Lease] : []));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.allSettled(adopted.map((lease) => lease.release()));
    throw failure.reason;
  }
  return combineLeases(handle.name, adopted);
}
