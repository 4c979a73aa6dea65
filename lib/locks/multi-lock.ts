import { currentContext } from '../context.js';
import { InvalidArgumentError, LockAcquireTimeoutError, LockNotHeldError } from '../errors.js';
import { Lease } from '../lease/lease.js';
import {
  checkFunction,
  checkLockArgs,
  checkTryLockArgs,
  checkWaitOptions,
  type ParsedWait,
} from '../validate.js';
import { ownerCallsOf } from '../owner-calls.js';
import { LockMember } from './lock-member.js';
import { runWithLease } from '../lease/run-with-lease.js';
import { combineLeases } from '../lease/combine-leases.js';
import { raceDeadline } from '../waiting/wait.js';
import { memberHolders } from '../inspect/composite.js';
import type { LockHolder } from '../inspect/types.js';
import type { LockWaitOptions, RLock, SignalOptions } from './lock-interfaces.js';

/**
 * Several locks taken as one: all of them or none (Redisson's RedissonMultiLock). It is an RLock
 * itself, over locks of any kinds, clients and servers.
 *
 * - Locks are taken one after another in one global order (by key, then server), waiting on
 *   each with what is left of the wait budget, so two MultiLocks over the same locks never
 *   deadlock each other. When the budget runs out (or the wait fails) the locks taken so far
 *   are released before the call returns: it never leaves a partial set held.
 * - Ownership is that of each member lock: inside a context every member is held by the
 *   context's owner (so the MultiLock re-enters there, and `withLock` runs its callback in a
 *   context); outside any context each call takes every member for a fresh owner, and
 *   `unlock()` releases the latest hold this client took outside a context on each member.
 * - With a `leaseTime`, the first member's lease starts first: if it ran out while the others
 *   were being waited for, the set is let go and taken again within the budget.
 *
 * @example
 * const transfer = new MultiLock(locks.getLock('account:1'), locks.getLock('account:2'));
 * await transfer.withLock(async () => move(1, 2, 100), { waitTime: 5_000 });
 */
export class MultiLock implements RLock {
  /** `MultiLock(<member names>)`, in the order they were given. */
  readonly name: string;
  /** The members in acquisition order. */
  readonly #members: readonly LockMember[];
  /** Names its members on their clients: MultiLocks over the same locks share their holds. */
  readonly #id: string;

  /** @throws InvalidArgumentError with no lock, a value that is not an rlock lock, or a lock given twice. */
  constructor(...locks: RLock[]) {
    if (locks.length === 0) throw new InvalidArgumentError('a MultiLock needs at least one lock');
    const members = locks.map((lock: unknown, i) => {
      const calls = ownerCallsOf(lock);
      if (!calls) {
        throw new InvalidArgumentError(
          `lock #${i + 1} of a MultiLock must be a lock made by a LockClient (getLock, getFencedLock, ` +
            `getReadWriteLock(name).readLock() or .writeLock()), got ${lock instanceof MultiLock ? 'a MultiLock' : typeof lock}`,
        );
      }
      return new LockMember(lock as RLock, calls);
    });
    members.forEach((lock, i) => {
      const twin = members.findIndex((other, j) => j < i && other.isSameLockAs(lock));
      if (twin !== -1) {
        throw new InvalidArgumentError(
          `locks #${twin + 1} and #${i + 1} of a MultiLock are the same lock "${lock.name}": it would wait for itself`,
          { lockName: lock.name },
        );
      }
    });
    this.name = `MultiLock(${members.map((lock) => lock.name).join(', ')})`;
    this.#members = [...members].sort((a, b) => (a.orderKey < b.orderKey ? -1 : a.orderKey > b.orderKey ? 1 : 0));
    this.#id = this.#members.map((member) => member.identity).join('\n');
  }

  async lock(leaseTime?: number, options?: SignalOptions): Promise<void> {
    await this.#takeMembers(checkLockArgs(leaseTime, options, this.name));
  }

  tryLock(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<boolean>;
  tryLock(options: LockWaitOptions): Promise<boolean>;
  async tryLock(waitOrOptions?: number | LockWaitOptions, leaseTime?: number, options?: SignalOptions): Promise<boolean> {
    const parsed = checkTryLockArgs(waitOrOptions, leaseTime, options, this.name);
    return this.#takeMembers({ ...parsed, waitMs: parsed.waitMs ?? 0 });
  }

  /**
   * Releases one hold of every member, by exact owner: in a context the context's; outside one,
   * the members of the latest set this client took outside a context with this MultiLock.
   * @throws LockNotHeldError naming the members the current owner did not hold.
   */
  async unlock(): Promise<void> {
    if (!currentContext()) {
      const set = unscopedSets.get(this.#id)?.at(-1);
      if (!set) throw new LockNotHeldError(`${this.name} is not held by the current owner`, { lockName: this.name });
      this.#forgetSet(set);
      try {
        await letGoOfMembers(set);
      } catch (error) {
        // Still held (a release failed): a retried unlock must find the set.
        if (!(error instanceof LockNotHeldError)) this.#rememberSet(set);
        throw error;
      }
      return;
    }
    const results = await Promise.allSettled(this.#members.map(({ lock }) => lock.unlock()));
    const failed = results.flatMap((result, i) =>
      result.status === 'rejected' ? [{ lock: this.#members[i]!.lock, error: result.reason as unknown }] : [],
    );
    if (failed.length === 0) return;
    const other = failed.find(({ error }) => !(error instanceof LockNotHeldError));
    if (other) throw other.error;
    throw new LockNotHeldError(
      `${this.name} is not held by the current owner: ${failed.map(({ lock }) => `"${lock.name}"`).join(', ')} not held`,
      { lockName: this.name },
    );
  }

  /** Force-unlocks every member; true if any was locked. */
  async forceUnlock(): Promise<boolean> {
    const removed = await Promise.all(this.#members.map(({ lock }) => lock.forceUnlock()));
    return removed.includes(true);
  }

  /** True when any member is locked (by anyone): the MultiLock could not be taken at once. */
  async isLocked(): Promise<boolean> {
    return (await Promise.all(this.#members.map(({ lock }) => lock.isLocked()))).includes(true);
  }

  /** True when the current owner holds every member. */
  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  /** How many times the current owner holds the whole set: the smallest hold count of its members. */
  async getHoldCount(): Promise<number> {
    if (currentContext()) return Math.min(...(await Promise.all(this.#members.map(({ lock }) => lock.getHoldCount()))));
    const set = unscopedSets.get(this.#id)?.at(-1);
    if (!set) return 0;
    return Math.min(...(await Promise.all(set.map(({ member, owner }) => member.holdCountOf(owner)))));
  }

  /** Each member's holders, tagged with the member's name (`lock`). */
  async getHolders(): Promise<LockHolder[]> {
    const locks = this.#members.map(({ lock }) => lock);
    return memberHolders(locks, await Promise.all(locks.map((lock) => lock.getHolders())));
  }

  /** ms until the first locked member's lease ends (-1: one has no TTL); -2 when none is locked. */
  async remainTimeToLive(): Promise<number> {
    const ttls = await Promise.all(this.#members.map(({ lock }) => lock.remainTimeToLive()));
    const running = ttls.filter((ttl) => ttl >= 0);
    if (running.length > 0) return Math.min(...running);
    return ttls.includes(-1) ? -1 : -2;
  }

  /**
   * Acquires every member and returns one Lease: its `signal` aborts when any member is lost,
   * `release()` releases every member, and `owner` is the owner id of the first member.
   * @throws LockAcquireTimeoutError when `waitTime` runs out (no member is left held).
   */
  async acquire(options?: LockWaitOptions): Promise<Lease> {
    return this.#combine(await this.#acquireLeases(checkWaitOptions(options, this.name)));
  }

  async withLock<T>(fn: (lease: Lease) => T | Promise<T>, options?: LockWaitOptions): Promise<T> {
    const body = checkFunction<(lease: Lease) => T | Promise<T>>(fn, 'fn');
    const parsed = checkWaitOptions(options, this.name);
    // A release that fails after fn threw is reported by the first member's client.
    return runWithLease(async () => this.#combine(await this.#acquireLeases(parsed)), body, (error) => this.#members[0]!.reportError(error));
  }

  /**
   * lock()/tryLock(): takes every member for an owner of its own, by exact owner (no Lease). A set
   * taken outside a context is remembered for unlock() until any member's hold ends.
   */
  async #takeMembers(parsed: ParsedWait): Promise<boolean> {
    const take = async (member: LockMember, waitMs: number | undefined): Promise<MemberHold | false> => {
      const owner = member.newOwner();
      return (await member.acquireAs(owner, waitMs, parsed.leaseMs, parsed.signal)) ? { member, owner } : false;
    };
    const set = await this.#takeAll(parsed, take, letGoOfMembers, ({ member, owner }) => member.isHeldBy(owner));
    if (set === false) return false;
    if (!currentContext()) {
      this.#rememberSet(set);
      // A member lost or expired: the set is no longer held as a whole, unlock() must not find it.
      for (const { member, owner } of set) if (!member.whenHoldEnds(owner, () => this.#forgetSet(set))) this.#forgetSet(set);
    }
    return true;
  }

  #rememberSet(set: MemberHold[]): void {
    const sets = unscopedSets.get(this.#id);
    if (!sets) unscopedSets.set(this.#id, [set]);
    else if (!sets.includes(set)) sets.push(set);
  }

  #forgetSet(set: MemberHold[]): void {
    const sets = unscopedSets.get(this.#id);
    const at = sets?.indexOf(set) ?? -1;
    if (at === -1) return;
    sets!.splice(at, 1);
    if (sets!.length === 0) unscopedSets.delete(this.#id);
  }

  /** One Lease per member, in acquisition order. @throws LockAcquireTimeoutError when the budget ran out. */
  async #acquireLeases(parsed: ParsedWait): Promise<Lease[]> {
    const take = async ({ lock }: LockMember, waitMs: number | undefined): Promise<Lease | false> => {
      try {
        return await lock.acquire({ waitTime: waitMs, leaseTime: parsed.leaseMs, signal: parsed.signal, maxHoldTime: parsed.maxHoldMs });
      } catch (error) {
        if (error instanceof LockAcquireTimeoutError) return false;
        throw error;
      }
    };
    const leases = await this.#takeAll(parsed, take, letGoOfLeases, (lease) => !lease.signal.aborted);
    if (leases === false) {
      throw new LockAcquireTimeoutError(`timed out after ${parsed.waitMs} ms waiting for ${this.name}`, parsed.waitMs ?? 0, {
        lockName: this.name,
      });
    }
    return leases;
  }

  /**
   * Takes every member in order with `take` (waitMs: what is left of the budget, at least one
   * attempt each; undefined: no limit). Whatever stops the round (a member not taken in time,
   * an error, an abort) lets go of the members taken so far, waiting for that within the budget.
   */
  async #takeAll<H>(
    { waitMs, signal }: ParsedWait,
    take: (member: LockMember, waitMs: number | undefined) => Promise<H | false>,
    undo: (held: H[]) => Promise<void>,
    stillHeld: (held: H) => boolean,
  ): Promise<H[] | false> {
    signal?.throwIfAborted();
    const deadline = waitMs === undefined ? Infinity : performance.now() + waitMs;
    for (;;) {
      const held: H[] = [];
      try {
        for (const member of this.#members) {
          const got = await take(member, deadline === Infinity ? undefined : Math.max(0, Math.ceil(deadline - performance.now())));
          if (got === false) break;
          held.push(got);
        }
      } catch (error) {
        await this.#letGo(undo(held), deadline, signal);
        throw error;
      }
      const complete = held.length === this.#members.length;
      // A member lost (or whose lease ran out) while the others were waited for: the set is not
      // held as a whole; let go and take it again within the budget.
      if (complete && held.every(stillHeld)) return held;
      await this.#letGo(undo(held), deadline, signal);
      if (!complete || performance.now() >= deadline) return false;
    }
  }

  /**
   * Waits for the releases of a round that failed, but not past the wait budget, nor past an
   * abort (the caller gave up: its call must end then, not when the budget it no longer wants
   * runs out). A release that gets no answer goes on in the background (and is retried there),
   * it does not hold up the call. A failure is reported as an `error` event of the first member's client.
   */
  async #letGo(releases: Promise<void>, deadline: number, signal: AbortSignal | undefined): Promise<void> {
    const reported = releases.catch((error: unknown) => this.#members[0]!.reportError(error));
    // An abort ends the wait; the call then rejects with the abort's reason (where it is thrown).
    await raceDeadline(reported, deadline, signal).catch(() => undefined);
  }

  #combine(leases: Lease[]): Lease {
    return combineLeases(this.name, leases);
  }
}

/** One member held for one owner: how a MultiLock releases exactly what it took. */
interface MemberHold {
  readonly member: LockMember;
  readonly owner: string;
}

/**
 * Per MultiLock identity (its members on their clients): the sets this process took outside any
 * context, latest last. A set leaves when it is unlocked or any of its member holds ends.
 */
const unscopedSets = new Map<string, MemberHold[][]>();

/**
 * Lets go of the members taken by a round that failed. A hold that is gone already (its lease
 * ran out meanwhile) is no error; any other failure rejects once every release was tried.
 */
async function letGo(releases: (() => Promise<unknown>)[]): Promise<void> {
  const results = await Promise.allSettled(releases.map((release) => release()));
  const failure = results.find((result) => result.status === 'rejected' && !(result.reason instanceof LockNotHeldError));
  if (failure?.status === 'rejected') throw failure.reason;
}

const letGoOfMembers = (members: MemberHold[]): Promise<void> => letGo(members.map(({ member, owner }) => () => member.releaseAs(owner)));
const letGoOfLeases = (leases: Lease[]): Promise<void> => letGo(leases.map((lease) => () => lease.release()));
