import { currentContext, newContextId, ownerId } from '../context.js';
import type { LockCore } from '../core.js';
import { describeRedLockRound, LockAcquireTimeoutError, LockNotHeldError, type RedLockQuorumError } from '../errors.js';
import { ScriptStatus, type HoldsLeft } from '../scripts/registry.js';
import type { Lease } from '../lease/lease.js';
import type { RedLockOptions } from '../options.js';
import type { WaiterQueue } from '../waiting/waiter-queue.js';
import { attemptRound, leaveQueues, openQueues, pauseAfter, subscribeAll, type Attempt, type RoundNodes } from './acquire-round.js';
import { fanOut, type FanOutResult } from './fan-out.js';
import { askMajority, majorityValue } from './majority-query.js';
import { certain, quorumError, quorumOf, tally, type Verdict } from './quorum.js';
import { RedHold } from './red-hold.js';
import { redHoldFor, redHoldOf, unscopedKeyOf } from './red-holds.js';
import { capRedHold } from './cap-red-hold.js';
import { adoptRed, redLockParts, redMoves, type RedLockParts } from './red-moves.js';
import { parseRedLockArgs } from './red-lock-args.js';
import { newRedRelease, type RedRelease } from './red-release.js';
import { leaseOfHold } from '../lease/lease-of-hold.js';
import { checkFunction, checkLockArgs, checkTryLockArgs, checkWaitOptions, WATCHDOG_LEASE } from '../validate.js';
import { raceDeadline } from '../waiting/wait.js';
import { releaseOnNode, type RedNode } from './red-node.js';
import { runWithLease } from '../lease/run-with-lease.js';
import type { LeaseHandle } from '../lease/lease-handle.js';
import { majorityHolders } from '../inspect/composite.js';
import type { LockHolder } from '../inspect/types.js';
import type { LockWaitOptions, RLock, SignalOptions } from '../locks/lock-interfaces.js';

const heldByOwner = (left: HoldsLeft): Verdict => (left === ScriptStatus.NotHeld ? 'no' : 'yes');
/**
 * The Redlock algorithm over N independent Redis masters, as an {@link RLock}. Each lock given
 * comes from a LockClient of a different master. An acquisition sends one owner to every node
 * at once, each answer awaited at most `nodeTimeout`, and holds only when a majority
 * (N/2 + 1) granted it while the validity (lease − elapsed − drift) is still positive; otherwise
 * it releases on every node and retries after a random delay, or sooner when a node publishes a
 * release. Reentrant per owner like every rlock lock. Each granting node keeps a hold in its
 * own client (renewed by that client's watchdog, ended by the holder's clock); the RedLock is
 * lost when fewer than a majority remain. Events go to the first lock's client.
 *
 * @example
 * const redLock = new RedLock(a.getLock('job'), b.getLock('job'), c.getLock('job'), { nodeTimeout: 20 });
 * if (await redLock.tryLock(1_000, 10_000)) {
 *   try { await work(); } finally { await redLock.unlock(); }
 * } else {
 *   console.warn(redLock.lastFailure?.message);
 * }
 */
export class RedLock implements RLock {
  readonly name: string;
  readonly #locks: readonly RLock[];
  readonly #nodes: readonly RedNode[];
  /** The first lock's client: it names owners and receives the events. */
  readonly #home: LockCore;
  /** The lease in watchdog mode: the shortest `watchdogTimeout` of the nodes' clients. */
  readonly #watchdogTtlMs: number;
  /** What an acquisition round needs of the nodes. */
  readonly #round: RoundNodes;
  /** What its holds and their moves (extend, handOff, adopt) need of it. */
  readonly #parts: RedLockParts;
  readonly #unscopedKey: string;
  #lastFailure: RedLockQuorumError | undefined;

  /**
   * @param locks one lock (from `getLock`) per independent Redis master, each from its own
   *   LockClient; optionally followed by {@link RedLockOptions}.
   * @throws InvalidArgumentError for no locks, a value that is no such lock, two locks of one
   *   client or one Redis server, or a bad option.
   */
  constructor(...locks: RLock[]);
  constructor(...args: [...locks: RLock[], options: RedLockOptions]);
  constructor(...args: unknown[]) {
    const { locks, nodes, nodeTimeoutMs, maxRenewals } = parseRedLockArgs(args);
    this.#locks = locks;
    this.#nodes = nodes;
    this.#home = nodes[0]!.core;
    this.name = [...new Set(this.#locks.map((lock) => lock.name))].join(',');
    this.#watchdogTtlMs = Math.min(...nodes.map((node) => node.core.watchdogTimeoutMs));
    this.#round = { locks: nodes, quorum: quorumOf(nodes.length), nodeTimeoutMs };
    this.#parts = redLockParts(this.name, locks, this.#round, maxRenewals, {
      lease: (owner, hold, release) => this.#lease(owner, hold, release),
      release: (owner) => this.#release(owner),
    });
    this.#unscopedKey = unscopedKeyOf(this.#parts);
  }

  /**
   * Why the latest acquisition on this RedLock gave up (tryLock returned false, or acquire/
   * withLock timed out): what the nodes answered in its last round. Read it right after the
   * call; another call on this instance that gives up replaces it.
   */
  get lastFailure(): RedLockQuorumError | undefined {
    return this.#lastFailure;
  }

  async lock(leaseTime?: number, options?: SignalOptions): Promise<void> {
    const { leaseMs, signal, maxHoldMs } = checkLockArgs(leaseTime, options, this.name);
    this.#assertOpen();
    await this.#acquire(this.#acquiringOwner(), undefined, leaseMs, signal, maxHoldMs);
  }

  tryLock(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<boolean>;
  tryLock(options: LockWaitOptions): Promise<boolean>;
  async tryLock(waitOrOptions?: number | LockWaitOptions, leaseTime?: number, options?: SignalOptions): Promise<boolean> {
    const parsed = checkTryLockArgs(waitOrOptions, leaseTime, options, this.name);
    this.#assertOpen();
    const outcome = await this.#acquire(this.#acquiringOwner(), parsed.waitMs ?? 0, parsed.leaseMs, parsed.signal, parsed.maxHoldMs);
    return outcome instanceof RedHold;
  }

  async unlock(): Promise<void> {
    this.#assertOpen();
    this.#home.holds.calls.assertNotHandedOff(this.#unscopedKey, this.name);
    const owner = this.#currentOwner();
    if (owner === undefined) throw this.#notHeld();
    await this.#release(owner);
  }

  /** Deletes the lock on every node whoever holds it; true if any node had it. */
  async forceUnlock(): Promise<boolean> {
    this.#assertOpen();
    return (await askMajority(this.#round, this.name, (i) => this.#locks[i]!.forceUnlock())).some(Boolean);
  }

  /** True when a majority of the nodes have the lock. */
  async isLocked(): Promise<boolean> {
    this.#assertOpen();
    return (await askMajority(this.#round, this.name, (i) => this.#locks[i]!.isLocked())).filter(Boolean).length >= this.#round.quorum;
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  /** The hold count the current owner has on a majority of the nodes, 0 if none. */
  async getHoldCount(): Promise<number> {
    this.#assertOpen();
    const owner = this.#currentOwner();
    if (owner === undefined) return 0;
    return majorityValue(await askMajority(this.#round, this.name, (i) => this.#nodes[i]!.holdCount(owner)), this.#round.quorum);
  }

  /** The owners holding the lock on a majority of the nodes (see majorityHolders in lib/inspect/composite.ts). */
  async getHolders(): Promise<LockHolder[]> {
    this.#assertOpen();
    return majorityHolders(await askMajority(this.#round, this.name, (i) => this.#locks[i]!.getHolders()), this.#round.quorum);
  }

  /** The TTL a majority of the nodes still have, ms; -2 when a majority has no lock. */
  async remainTimeToLive(): Promise<number> {
    this.#assertOpen();
    return majorityValue(await askMajority(this.#round, this.name, (i) => this.#locks[i]!.remainTimeToLive()), this.#round.quorum);
  }

  async acquire(options?: LockWaitOptions): Promise<Lease> {
    const { waitMs, leaseMs, signal, maxHoldMs } = checkWaitOptions(options, this.name);
    this.#assertOpen();
    const owner = this.#acquiringOwner();
    const outcome = await this.#acquire(owner, waitMs, leaseMs, signal, maxHoldMs);
    if (!(outcome instanceof RedHold)) {
      throw new LockAcquireTimeoutError(
        `timed out after ${waitMs} ms waiting for RedLock "${this.name}"; last round: ${describeRedLockRound(outcome)}`,
        waitMs ?? 0,
        { lockName: this.name, cause: outcome },
      );
    }
    return this.#lease(owner, outcome);
  }

  async withLock<T>(fn: (lease: Lease) => T | Promise<T>, options?: LockWaitOptions): Promise<T> {
    const body = checkFunction<(lease: Lease) => T | Promise<T>>(fn, 'fn');
    checkWaitOptions(options, this.name);
    return runWithLease(() => this.acquire(options), body, (error) => this.#home.events.emit('error', error));
  }

  /**
   * Adopts a RedLock's hold handed off by `lease.handOff()` (a handle of kind `redlock`), on a
   * RedLock over the same nodes: each node's hold is adopted through that node's client, and it
   * is this process's when a majority adopted it in time. The Lease is renewed by the nodes'
   * watchdogs in watchdog mode (`maxHoldTime` counted from now) or kept to its fixed lease; its
   * `release()` releases every hold count. `locks.adopt()` refuses such a handle.
   * @throws InvalidArgumentError for a handle of another kind, or of a RedLock over other nodes.
   * @throws LockLostError when a majority of the nodes had it adopted already, or it ended.
   * @throws LockRedisError (`cause`: RedLockQuorumError) when too few nodes answered in time.
   */
  adopt(handle: LeaseHandle, options?: { maxHoldTime?: number }): Promise<Lease> {
    return adoptRed(this.#parts, handle, options);
  }

  /** Acquires for `owner` (a call a hand-off excludes: hold-calls.ts): the hold, or why the last round failed once the wait ran out. */
  async #acquire(
    owner: string,
    waitMs: number | undefined,
    leaseMs: number,
    signal: AbortSignal | undefined,
    maxHoldMs?: number,
  ): Promise<RedHold | RedLockQuorumError> {
    signal?.throwIfAborted();
    const call = this.#home.holds.calls.enterAcquisition(this.#unscopedKey, owner, this.name);
    const watchdog = leaseMs === WATCHDOG_LEASE;
    const ttlMs = watchdog ? this.#watchdogTtlMs : leaseMs;
    const deadline = waitMs === undefined ? Infinity : performance.now() + waitMs;
    let queues: WaiterQueue[] | undefined;
    let won: Attempt | undefined;
    try {
      for (let attempts = 1; ; attempts += 1) {
        const reentrant = (redHoldOf(this.#parts, owner)?.count ?? 0) > 0;
        const attempt = await attemptRound(this.#round, owner, ttlMs, watchdog, reentrant, queues, signal);
        if (attempt.acquired) {
          won = attempt;
          return this.#held(owner, attempt, leaseMs, maxHoldMs);
        }
        if (performance.now() >= deadline) return this.#gaveUp(attempt, attempts);
        if (!queues) {
          // From now on the nodes that refuse register this client as a waiter and publish to it
          // when they free the lock. The subscriptions are awaited at most a per-node timeout
          // (a frozen node must not hold up the wait), then a busy lock is asked again at once.
          queues = openQueues(this.#round);
          await raceDeadline(subscribeAll(queues), Math.min(deadline, performance.now() + this.#round.nodeTimeoutMs), signal);
          if (attempt.busy) continue;
        }
        await pauseAfter(this.#round, attempt, queues, deadline, signal);
        if (performance.now() >= deadline) return this.#gaveUp(attempt, attempts);
      }
    } finally {
      this.#home.holds.calls.leave(call);
      if (queues) leaveQueues(this.#round, queues, won);
    }
  }

  #held(owner: string, attempt: Attempt, leaseMs: number, maxHoldMs: number | undefined): RedHold {
    const hold = redHoldFor(this.#parts, owner);
    // Synchronously with the answers: each granted node's hold record (its holder's clock, and
    // renewal by its client's watchdog) exists before user code runs.
    const watchdog = leaseMs === WATCHDOG_LEASE;
    const maxRenewals = watchdog ? this.#parts.maxRenewals : undefined;
    hold.won(
      attempt.round,
      (node) => this.#nodes[node]!.track(owner, attempt.round.startedAt, leaseMs, maxRenewals),
      (node) => void releaseOnNode(this.#nodes[node]!, owner).catch(() => undefined),
      watchdog,
    );
    capRedHold(hold, maxHoldMs ?? this.#home.maxHoldTimeMs, this.#nodes, this.name);
    if (!currentContext()) this.#home.holds.unscoped.remember(this.#unscopedKey, owner);
    this.#home.events.emit('acquired', { name: this.name, owner });
    return hold;
  }

  #gaveUp(attempt: Attempt, attempts: number): RedLockQuorumError {
    const { round, counted, validityMs } = attempt;
    const validity = counted.yes >= this.#round.quorum ? validityMs : undefined;
    this.#lastFailure = quorumError('acquire', this.name, round, counted, { attempts, validityMs: validity });
    return this.#lastFailure;
  }

  /**
   * Releases one hold of `owner` on every node. It succeeds when a majority confirmed the
   * owner's hold. The releases reach every node either way, so this process counts the hold
   * as given up even when the answers fall short (they throw LockNotHeldError).
   */
  async #release(owner: string, release: RedRelease = newRedRelease(this.#nodes.length)): Promise<void> {
    const call = this.#home.holds.calls.enter(this.#unscopedKey, owner, this.name);
    const hold = redHoldOf(this.#parts, owner);
    if (hold) hold.releasing += 1;
    let round: FanOutResult<HoldsLeft>;
    try {
      round = await fanOut(
        this.#nodes.length,
        (i) => releaseOnNode(this.#nodes[i]!, owner, release.nodes[i]),
        this.#round.nodeTimeoutMs,
        (answers) => certain(tally(answers, heldByOwner), this.#nodes.length),
      );
    } finally {
      if (hold) hold.releasing -= 1;
      this.#home.holds.calls.leave(call);
    }
    const counted = tally(round.answers, heldByOwner);
    const stillHeld = round.answers.filter((answer) => answer?.kind === 'answered' && answer.value !== ScriptStatus.NotHeld && answer.value > 0).length;
    // A retried release counts once.
    const ended = hold ? (release.counted ? hold.ended : hold.released()) : stillHeld < this.#round.quorum;
    release.counted = true;
    if (hold && !ended) hold.settled();
    if (ended) this.#home.holds.unscoped.forget(this.#unscopedKey, owner);
    if (counted.yes < this.#round.quorum) throw this.#notHeld(quorumError('release', this.name, round, counted));
    if (ended) this.#home.events.emit('released', { name: this.name, owner });
  }

  /** `release`: instead of one release (an adopted Lease releases every hold count). */
  #lease(owner: string, hold: RedHold, release?: () => Promise<void>): Lease {
    // A retried release (after one that failed) is the same release again on every node: a node
    // that applied it answers as it did, one still retrying it in the background sends it again.
    // A Lease of a lost hold releases nothing of a later hold of its owner.
    const once = newRedRelease(this.#nodes.length);
    const releaseOnce = async (): Promise<void> => {
      if (hold.movedAway) return;
      if ((redHoldOf(this.#parts, owner) ?? hold) !== hold) throw this.#notHeld();
      await this.#release(owner, once);
    };
    return leaseOfHold(this.name, owner, hold, undefined, release ?? releaseOnce, redMoves(this.#parts, owner, hold));
  }

  /** The owner acquiring now: the context's, or a fresh one outside any context. */
  #acquiringOwner(): string {
    return ownerId(this.#home.clientId, currentContext()?.id ?? newContextId());
  }

  /** The owner whose holds unlock and the queries concern (none after this context's hand-off: unlock refuses it first). */
  #currentOwner(): string | undefined {
    return this.#home.holds.currentOwner(this.#unscopedKey, this.#unscopedKey);
  }

  /** @throws LockClientClosedError when any of the nodes' clients is closed. */
  #assertOpen(): void {
    for (const node of this.#nodes) node.core.assertOpen();
  }

  #notHeld(cause?: RedLockQuorumError): LockNotHeldError {
    const detail = cause ? `: ${cause.message}` : '';
    return new LockNotHeldError(`RedLock "${this.name}" is not held by the current owner${detail}`, { lockName: this.name, cause });
  }
}
