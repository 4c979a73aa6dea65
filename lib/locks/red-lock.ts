import type { Redis } from 'ioredis';
import type { Hold } from '../holds.js';
import { currentContext, newContextId, ownerId, runInNewContext } from '../context.js';
import type { LockCore } from '../core.js';
import {
  describeRedLockRound,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockNotHeldError,
  ScriptStatus,
  type RedLockQuorumError,
} from '../errors.js';
import { exclusiveWait } from '../keys.js';
import { Lease } from '../lease.js';
import { REDLOCK_DEFAULTS, type RedLockOptions } from '../options.js';
import type { WaiterQueue } from '../pubsub/waiter-queue.js';
import { fanOut, type FanOutResult } from '../redlock/fan-out.js';
import { certain, driftOf, quorumError, quorumOf, tally, type Tally, type Verdict } from '../redlock/quorum.js';
import { RedHold } from '../redlock/red-hold.js';
import { WaiterMode, type RedisConnection } from '../scripts/registry.js';
import {
  checkCount,
  checkFunction,
  checkLeaseTime,
  checkObject,
  checkPositiveDuration,
  checkSignal,
  checkWaitTime,
  WATCHDOG_LEASE,
} from '../validate.js';
import { raceDeadline } from '../wait.js';
import { nodeLockOf, type NodeLock } from './node-lock.js';
import type { LockWaitOptions, RLock, SignalOptions } from './rlock.js';

const KNOWN_OPTIONS = new Set(['nodeTimeout', 'maxRenewals']);

/** How long the record of an undo (a release nobody awaits) answers a resend, ms. */
const UNDO_RECORD_MS = 1_000;

/**
 * Holds of every RedLock in this process, by the RedLock's nodes and the owner: RedLocks built
 * over the same locks share them, as plain locks share their Redis hash.
 */
const holds = new Map<string, RedHold>();

const granted = (holderTtl: number | null): Verdict => (holderTtl === null ? 'yes' : 'no');
const heldByOwner = (left: number): Verdict => (left === ScriptStatus.NotHeld ? 'no' : 'yes');

/** One acquisition round, decided. */
interface Attempt {
  readonly round: FanOutResult<number | null>;
  readonly counted: Tally;
  /** lease − elapsed − drift, ms: the lock is ours only while this is positive. */
  readonly validityMs: number;
  readonly acquired: boolean;
  /** So many nodes are held by other owners that no majority is possible until some free up. */
  readonly busy: boolean;
  /** When busy: how long until enough of those holders' keys expire, ms. */
  readonly freeInMs: number;
  /**
   * A node refused while this client's wake-up channel there was not yet live: a release it
   * published since may have reached nobody, so a notice cannot be relied on for the next try.
   */
  readonly deaf: boolean;
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Where a connection points, to tell two locks on one Redis apart: for connections to a given
 * host and port only (a Cluster or a Sentinel-managed master is found through others).
 */
function nodeAddress(connection: RedisConnection): string | undefined {
  if (connection.isCluster) return undefined;
  const { host, port, path, sentinels } = (connection as Redis).options;
  if (sentinels) return undefined;
  return path ? `unix:${path}` : `${host ?? 'localhost'}:${port ?? 6379}`;
}

function parseOptions(raw: Record<string, unknown>): { nodeTimeoutMs: number; maxRenewals: number | undefined } {
  for (const key of Object.keys(raw)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new InvalidArgumentError(`unknown RedLock option \`${key}\` (known: ${[...KNOWN_OPTIONS].join(', ')})`);
    }
  }
  return {
    nodeTimeoutMs:
      raw.nodeTimeout === undefined ? REDLOCK_DEFAULTS.nodeTimeout : checkPositiveDuration(raw.nodeTimeout, 'nodeTimeout'),
    maxRenewals: raw.maxRenewals === undefined ? undefined : checkCount(raw.maxRenewals, 'maxRenewals'),
  };
}

/** The value a majority of nodes reaches: the quorum-th largest. */
function majorityValue(values: number[], quorum: number): number {
  return values.sort((a, b) => b - a)[quorum - 1] ?? 0;
}

/**
 * The Redlock algorithm over N independent Redis masters, as an {@link RLock}. Each lock given
 * comes from a LockClient of a different master. An acquisition sends one owner to every node
 * at once, each answer awaited at most `nodeTimeout`, and holds only when a majority
 * (N/2 + 1) granted it while the validity (lease − elapsed − drift) is still positive; otherwise
 * it releases on every node and retries after a random delay, or sooner when a node publishes a
 * release. Reentrant per owner like every rlock lock; watchdog mode renews on every node and
 * counts a renewal only with a majority within the validity time. Events (`acquired`,
 * `released`, `renewed`, `lost`) go to the first lock's client, whose id also names the owner.
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
  readonly #nodes: readonly NodeLock[];
  /** The first lock's client: it names owners and receives the events. */
  readonly #home: LockCore;
  readonly #quorum: number;
  readonly #nodeTimeoutMs: number;
  readonly #maxRenewals: number | undefined;
  /** The lease in watchdog mode: the shortest `watchdogTimeout` of the nodes' clients. */
  readonly #watchdogTtlMs: number;
  /** Names this RedLock's nodes: the key of its holds and of its unscoped hold record. */
  readonly #id: string;
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
    const last = args.at(-1);
    const hasOptions = args.length > 0 && nodeLockOf(last) === undefined && isPlainObject(last);
    const options = parseOptions(hasOptions ? checkObject(last, 'options') : {});
    const locks = hasOptions ? args.slice(0, -1) : args;
    if (locks.length === 0) {
      throw new InvalidArgumentError('`RedLock` needs at least one lock: one per independent Redis master');
    }
    const nodes = locks.map((lock, i) => {
      const node = nodeLockOf(lock);
      if (!node) throw new InvalidArgumentError(`RedLock argument ${i + 1} is not a lock from \`LockClient.getLock()\``);
      return node;
    });
    nodes.forEach((node, i) => {
      const address = nodeAddress(node.core.redis);
      for (let j = 0; j < i; j += 1) {
        const other = nodes[j]!;
        if (locks[j] === locks[i]) throw new InvalidArgumentError(`RedLock locks ${j + 1} and ${i + 1} are the same lock`);
        if (other.core.clientId === node.core.clientId) {
          throw new InvalidArgumentError(`RedLock locks ${j + 1} and ${i + 1} come from the same LockClient: use one client per Redis master`);
        }
        if (other.core.redis === node.core.redis || (address !== undefined && address === nodeAddress(other.core.redis))) {
          throw new InvalidArgumentError(
            `RedLock locks ${j + 1} and ${i + 1} are on the same Redis server${address === undefined ? '' : ` (${address})`}: the nodes must be independent masters`,
          );
        }
      }
    });
    this.#locks = locks as RLock[];
    this.#nodes = nodes;
    this.#home = nodes[0]!.core;
    this.name = [...new Set(this.#locks.map((lock) => lock.name))].join(',');
    this.#quorum = quorumOf(nodes.length);
    this.#nodeTimeoutMs = options.nodeTimeoutMs;
    this.#maxRenewals = options.maxRenewals;
    this.#watchdogTtlMs = Math.min(...nodes.map((node) => node.core.watchdogTimeoutMs));
    this.#id = nodes.map((node) => `${node.core.clientId}/${node.keys.lock}`).join('\n');
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
    const leaseMs = checkLeaseTime(leaseTime, this.name);
    const signal = this.#parseSignal(options);
    this.#assertOpen();
    await this.#acquire(this.#acquiringOwner(), undefined, leaseMs, signal);
  }

  tryLock(waitTime?: number, leaseTime?: number, options?: SignalOptions): Promise<boolean>;
  tryLock(options: LockWaitOptions): Promise<boolean>;
  async tryLock(waitOrOptions?: number | LockWaitOptions, leaseTime?: number, options?: SignalOptions): Promise<boolean> {
    const parsed =
      typeof waitOrOptions === 'object' && waitOrOptions !== null
        ? this.#parseWait(waitOrOptions)
        : {
            waitMs: checkWaitTime(waitOrOptions, this.name),
            leaseMs: checkLeaseTime(leaseTime, this.name),
            signal: this.#parseSignal(options),
          };
    this.#assertOpen();
    const outcome = await this.#acquire(this.#acquiringOwner(), parsed.waitMs ?? 0, parsed.leaseMs, parsed.signal);
    return outcome instanceof RedHold;
  }

  async unlock(): Promise<void> {
    this.#assertOpen();
    const owner = this.#currentOwner();
    if (owner === undefined) throw this.#notHeld();
    await this.#release(owner);
  }

  /** Deletes the lock on every node whoever holds it; true if any node had it. */
  async forceUnlock(): Promise<boolean> {
    this.#assertOpen();
    return (await this.#query((i) => this.#locks[i]!.forceUnlock())).some(Boolean);
  }

  /** True when a majority of the nodes have the lock. */
  async isLocked(): Promise<boolean> {
    this.#assertOpen();
    return (await this.#query((i) => this.#locks[i]!.isLocked())).filter(Boolean).length >= this.#quorum;
  }

  async isHeldByCurrentOwner(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  /** The hold count the current owner has on a majority of the nodes, 0 if none. */
  async getHoldCount(): Promise<number> {
    this.#assertOpen();
    const owner = this.#currentOwner();
    if (owner === undefined) return 0;
    return majorityValue(await this.#query((i) => this.#nodes[i]!.holdCount(owner)), this.#quorum);
  }

  /** The TTL a majority of the nodes still have, ms; -2 when a majority has no lock. */
  async remainTimeToLive(): Promise<number> {
    this.#assertOpen();
    return majorityValue(await this.#query((i) => this.#locks[i]!.remainTimeToLive()), this.#quorum);
  }

  async acquire(options?: LockWaitOptions): Promise<Lease> {
    const { waitMs, leaseMs, signal } = this.#parseWait(options);
    this.#assertOpen();
    const owner = this.#acquiringOwner();
    const outcome = await this.#acquire(owner, waitMs, leaseMs, signal);
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
    this.#parseWait(options);
    const run = async (): Promise<T> => {
      const lease = await this.acquire(options);
      let result: T;
      try {
        result = await body(lease);
      } catch (error) {
        // fn's error is the one to see; a failed release is still reported.
        await lease.release().catch((releaseError: unknown) => this.#home.events.emit('error', releaseError));
        throw error;
      }
      await lease.release();
      return result;
    };
    // The callback runs in a context, so nested calls on this RedLock re-enter it.
    return currentContext() ? run() : runInNewContext(run);
  }

  /** Acquires for `owner`: the hold, or why the last round failed once the wait ran out. */
  async #acquire(
    owner: string,
    waitMs: number | undefined,
    leaseMs: number,
    signal: AbortSignal | undefined,
  ): Promise<RedHold | RedLockQuorumError> {
    signal?.throwIfAborted();
    const watchdog = leaseMs === WATCHDOG_LEASE;
    const ttlMs = watchdog ? this.#watchdogTtlMs : leaseMs;
    const deadline = waitMs === undefined ? Infinity : performance.now() + waitMs;
    let queues: WaiterQueue[] | undefined;
    let won: Attempt | undefined;
    try {
      for (let attempts = 1; ; attempts += 1) {
        const attempt = await this.#attempt(owner, ttlMs, watchdog, queues, signal);
        if (attempt.acquired) {
          won = attempt;
          return this.#held(owner, attempt, leaseMs);
        }
        if (performance.now() >= deadline) return this.#gaveUp(attempt, attempts);
        if (!queues) {
          // From now on the nodes that refuse register this client as a waiter and publish to it
          // when they free the lock. The subscriptions are awaited at most a per-node timeout
          // (a frozen node must not hold up the wait), then a busy lock is asked again at once.
          queues = this.#nodes.map((node) => node.core.waiters.get(exclusiveWait(node.keys)));
          for (const queue of queues) queue.enter();
          await raceDeadline(subscribeAll(queues), Math.min(deadline, performance.now() + this.#nodeTimeoutMs), signal);
          if (attempt.busy) continue;
        }
        await this.#pause(attempt, queues, deadline, signal);
        if (performance.now() >= deadline) return this.#gaveUp(attempt, attempts);
      }
    } finally {
      if (queues) this.#leaveQueues(queues, won);
    }
  }

  /**
   * One round on every node; a round without a majority is undone before it resolves. In
   * watchdog mode each node gets its own client's `watchdogTimeout` (its watchdog renews to that);
   * the validity counts with `ttlMs`, the shortest of them.
   */
  async #attempt(
    owner: string,
    ttlMs: number,
    watchdog: boolean,
    queues: WaiterQueue[] | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    const nodes = this.#nodes;
    const reentrant = (holds.get(this.#holdKey(owner))?.count ?? 0) > 0;
    const live = nodes.map((_, i) => queues?.[i]?.subscribed ?? false);
    const pending = fanOut(
      nodes.length,
      (i) => {
        const queue = queues?.[i];
        const mode = queue === undefined ? WaiterMode.Single : queue.othersWaiting ? WaiterMode.Shared : WaiterMode.Alone;
        return nodes[i]!.attempt(owner, watchdog ? nodes[i]!.core.watchdogTimeoutMs : ttlMs, mode);
      },
      this.#nodeTimeoutMs,
      (answers) => certain(tally(answers, granted), nodes.length),
    );
    let round: FanOutResult<number | null>;
    try {
      // Without a deadline this resolves with the round, or rejects when the signal aborts.
      round = (await raceDeadline(pending, Infinity, signal)) as FanOutResult<number | null>;
    } catch (error) {
      void pending.then((late) => this.#undo(owner, late, reentrant));
      throw error;
    }
    const counted = tally(round.answers, granted);
    const validityMs = ttlMs - (round.decidedAt - round.startedAt) - driftOf(ttlMs);
    const acquired = counted.yes >= this.#quorum && validityMs > 0;
    if (!acquired) await this.#undo(owner, round, reentrant);
    // Refusals that must go before a majority is possible, and when the soonest of them expire.
    const mustFree = counted.no - (nodes.length - this.#quorum);
    const holderTtls = round.answers
      .flatMap((answer) => (answer?.kind === 'answered' && answer.value !== null ? [answer.value] : []))
      .map((ttl) => (ttl > 0 ? ttl : ttl === 0 ? 1 : ttlMs))
      .sort((a, b) => a - b);
    const deaf = round.answers.some((answer, i) => answer?.kind === 'answered' && answer.value !== null && !live[i]);
    return { round, counted, validityMs, acquired, busy: mustFree > 0, freeInMs: holderTtls[mustFree - 1] ?? 0, deaf };
  }

  /**
   * Undoes a round that did not win. An owner that held nothing before releases on every node,
   * also where the attempt seemed to fail: on each node's connection the release runs after the
   * attempt, so a late grant is undone too. A re-entering owner must keep its earlier holds, so
   * it releases only where this round granted, and where a late answer turns out to be a grant.
   * Resolves once the nodes that granted have confirmed.
   */
  async #undo(owner: string, round: FanOutResult<number | null>, reentrant: boolean): Promise<void> {
    const nodes = this.#nodes;
    const grantedNow = round.answers.flatMap((answer, i) => (answer?.kind === 'answered' && answer.value === null ? [i] : []));
    if (reentrant) {
      round.answers.forEach((answer, i) => {
        if (answer === undefined || answer.kind === 'timeout') {
          round.calls[i]!.then(
            (late) => (late === null ? nodes[i]!.release(owner, 0, UNDO_RECORD_MS) : undefined),
            () => undefined,
          ).catch(() => undefined);
        }
      });
    }
    const targets = reentrant ? grantedNow : nodes.map((_, i) => i);
    await fanOut(
      targets.length,
      (j) => nodes[targets[j]!]!.release(owner, 0, UNDO_RECORD_MS),
      this.#nodeTimeoutMs,
      (answers) => targets.every((node, j) => !grantedNow.includes(node) || answers[j] !== undefined),
    );
  }

  /**
   * Sleeps after a failed round, never past the deadline. When other owners hold so many nodes
   * that no majority is possible, until a node publishes a release or enough holders expire;
   * otherwise (a split vote, failed nodes, or a refusing node whose notices could not reach us
   * yet) a random delay, so that clients that failed together do not retry together. Never
   * sooner than a random moment either: releases of other waiters' partial grants also
   * publish, and must not make the waiters spin.
   */
  async #pause(attempt: Attempt, queues: readonly WaiterQueue[], deadline: number, signal: AbortSignal | undefined): Promise<void> {
    const failedAt = performance.now();
    // A subscription that failed (its node was down) is tried again, in the background.
    if (attempt.deaf) void subscribeAll(queues);
    await sleepUntil(Math.min(deadline, failedAt + Math.random() * 2 * this.#nodeTimeoutMs), signal);
    const until = Math.min(deadline, failedAt + attempt.freeInMs);
    if (attempt.busy && !attempt.deaf && until > performance.now()) {
      await sleepOnQueues(queues, until - performance.now(), signal);
    }
  }

  #leaveQueues(queues: readonly WaiterQueue[], won: Attempt | undefined): void {
    queues.forEach((queue, i) => {
      const answer = won?.round.answers[i];
      // Registered as a waiter where the winning round was refused: leave now, unless others
      // of this client still wait there, rather than when the waiter set expires.
      if (answer?.kind === 'answered' && answer.value !== null && !queue.othersWaiting) {
        const node = this.#nodes[i]!;
        node.core.scripts.leaveWaiterSet(exclusiveWait(node.keys), node.core.clientId).catch(() => undefined);
      }
      queue.leave(won !== undefined);
    });
  }

  #held(owner: string, attempt: Attempt, leaseMs: number): RedHold {
    const key = this.#holdKey(owner);
    let hold = holds.get(key);
    if (!hold) {
      hold = new RedHold({
        lockName: this.name,
        nodes: this.#nodes.length,
        quorum: this.#quorum,
        maxRenewals: this.#maxRenewals,
        renewed: () => void this.#home.events.emit('renewed', { name: this.name, owner }),
        lost: (reason) => void this.#home.events.emit('lost', { name: this.name, owner, reason }),
        forget: (ended) => {
          if (holds.get(key) !== ended) return;
          holds.delete(key);
          // A hold left to expire is forgotten with its owner: nothing grows with unreleased holds.
          this.#forgetUnscoped(owner);
        },
      });
      holds.set(key, hold);
    }
    // Synchronously with the answers: each granted node's hold record (its holder's clock, and
    // renewal by its client's watchdog) exists before user code runs.
    const watchdog = leaseMs === WATCHDOG_LEASE;
    const { round } = attempt;
    const track = (node: number): Hold =>
      this.#nodes[node]!.track(owner, round.startedAt, leaseMs, watchdog ? this.#maxRenewals : undefined);
    const granted = new Map<number, Hold>();
    round.answers.forEach((answer, i) => {
      if (answer?.kind === 'answered' && answer.value === null) granted.set(i, track(i));
      else if (answer === undefined || answer.kind === 'timeout') {
        // Decided without this node's answer: a late grant is held (and renewed) too, or, if the
        // hold is gone by then, let go of at once.
        const current = hold;
        round.calls[i]!.then((late) => {
          if (late !== null) return;
          if (current.ended || holds.get(key) !== current) void this.#nodes[i]!.releaseHeld(owner).catch(() => undefined);
          else current.joined(i, track(i));
        }, () => undefined);
      }
    });
    hold.acquired(granted, watchdog);
    if (!currentContext()) this.#rememberUnscoped(owner);
    this.#home.events.emit('acquired', { name: this.name, owner });
    return hold;
  }

  #gaveUp(attempt: Attempt, attempts: number): RedLockQuorumError {
    const { round, counted, validityMs } = attempt;
    const failure = quorumError('acquire', this.name, round, counted, {
      attempts,
      validityMs: counted.yes >= this.#quorum ? validityMs : undefined,
    });
    this.#lastFailure = failure;
    return failure;
  }

  /**
   * Releases one hold of `owner` on every node. It succeeds when a majority confirmed the
   * owner's hold. The releases reach every node either way, so this process counts the hold
   * as given up even when the answers fall short (they throw LockNotHeldError).
   */
  async #release(owner: string): Promise<void> {
    const nodes = this.#nodes;
    const hold = holds.get(this.#holdKey(owner));
    if (hold) hold.releasing += 1;
    let round: FanOutResult<number>;
    try {
      round = await fanOut(
        nodes.length,
        (i) => nodes[i]!.releaseHeld(owner),
        this.#nodeTimeoutMs,
        (answers) => certain(tally(answers, heldByOwner), nodes.length),
      );
    } finally {
      if (hold) hold.releasing -= 1;
    }
    const counted = tally(round.answers, heldByOwner);
    const stillHeld = round.answers.filter((answer) => answer?.kind === 'answered' && answer.value > 0).length;
    const ended = hold ? hold.released() : stillHeld < this.#quorum;
    if (ended) this.#forgetUnscoped(owner);
    if (counted.yes < this.#quorum) throw this.#notHeld(quorumError('release', this.name, round, counted));
    if (ended) this.#home.events.emit('released', { name: this.name, owner });
  }

  /** Asks every node; the answers, when at least a majority answered. */
  async #query<T>(call: (node: number) => Promise<T>): Promise<T[]> {
    const round = await fanOut(this.#nodes.length, call, this.#nodeTimeoutMs);
    const values = round.answers.flatMap((answer) => (answer?.kind === 'answered' ? [answer.value] : []));
    if (values.length < this.#quorum) throw quorumError('query', this.name, round, tally(round.answers, () => 'yes'));
    return values;
  }

  #lease(owner: string, hold: RedHold): Lease {
    const controller = new AbortController();
    hold.leases.add(controller);
    return new Lease({
      name: this.name,
      owner,
      signal: controller.signal,
      release: async () => {
        hold.leases.delete(controller);
        try {
          await this.#release(owner);
        } catch (error) {
          // Already reported through the signal and `lost`: releasing a lost lock is no news.
          if (!(controller.signal.aborted && error instanceof LockNotHeldError)) throw error;
        }
      },
    });
  }

  get #unscopedKey(): string {
    return `redlock\u0000${this.#id}`;
  }

  #holdKey(owner: string): string {
    return `${this.#id}\u0000${owner}`;
  }

  /** The owner acquiring now: the context's, or a fresh one outside any context. */
  #acquiringOwner(): string {
    return ownerId(this.#home.clientId, currentContext()?.id ?? newContextId());
  }

  /** Remembers a hold taken outside any context (latest last), as BaseLock does. */
  #rememberUnscoped(owner: string): void {
    this.#home.holds.rememberUnscoped(this.#unscopedKey, owner);
  }

  #forgetUnscoped(owner: string): void {
    this.#home.holds.forgetUnscoped(this.#unscopedKey, owner);
  }

  /** The owner whose holds unlock and the queries concern. */
  #currentOwner(): string | undefined {
    const context = currentContext();
    return context ? ownerId(this.#home.clientId, context.id) : this.#home.holds.latestUnscoped(this.#unscopedKey);
  }

  /** @throws LockClientClosedError when any of the nodes' clients is closed. */
  #assertOpen(): void {
    for (const node of this.#nodes) node.core.assertOpen();
  }

  #notHeld(cause?: RedLockQuorumError): LockNotHeldError {
    const detail = cause ? `: ${cause.message}` : '';
    return new LockNotHeldError(`RedLock "${this.name}" is not held by the current owner${detail}`, { lockName: this.name, cause });
  }

  #parseSignal(options: unknown): AbortSignal | undefined {
    return checkSignal(checkObject(options, 'options').signal, this.name);
  }

  #parseWait(options: unknown): { waitMs: number | undefined; leaseMs: number; signal: AbortSignal | undefined } {
    const raw = checkObject(options, 'options');
    return {
      waitMs: checkWaitTime(raw.waitTime, this.name),
      leaseMs: checkLeaseTime(raw.leaseTime, this.name),
      signal: checkSignal(raw.signal, this.name),
    };
  }
}

/** Subscribes every queue's wake-up channel (those not subscribed yet); settles when all did or failed. */
async function subscribeAll(queues: readonly WaiterQueue[]): Promise<void> {
  await Promise.allSettled(queues.map((queue) => queue.subscribe()));
}

/** Resolves at `until` (performance.now() ms); rejects with the signal's reason on abort. */
async function sleepUntil(until: number, signal: AbortSignal | undefined): Promise<void> {
  if (until <= performance.now()) return;
  await raceDeadline(new Promise<never>(() => undefined), until, signal);
}

/** Sleeps until any of the queues is woken by a notice, `ms` pass, or the signal aborts. */
async function sleepOnQueues(queues: readonly WaiterQueue[], ms: number, signal: AbortSignal | undefined): Promise<void> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const sleeps = queues.map((queue) => queue.sleep(ms, stop.signal));
  // Sleepers of the other queues are stopped below; their rejections are expected.
  for (const sleep of sleeps) sleep.catch(() => undefined);
  try {
    await Promise.race(sleeps);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
