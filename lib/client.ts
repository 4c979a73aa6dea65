import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { runInNewContext } from './context.js';
import type { RedisConnection } from './redis/connection.js';
import type { LockClientEvents, LockCore } from './core.js';
import { LockClientClosedError, toLockError } from './errors.js';
import { Holds, type Hold } from './holding/holds.js';
import { adoptHandle } from './lease/adopt.js';
import { checkLeaseHandle, type LeaseHandle } from './lease/lease-handle.js';
import type { Lease } from './lease/lease.js';
import type { Permit } from './synchronizers/permit.js';
import { CountDownLatch, type RCountDownLatch } from './synchronizers/count-down-latch.js';
import { Semaphore, type RSemaphore, type SemaphoreOptions } from './synchronizers/semaphore.js';
import { Election, type RElection } from './leadership/election.js';
import { runExclusive, type RunExclusiveOptions, type RunExclusiveResult } from './leadership/run-exclusive.js';
import { evictionCheck } from './ops/eviction-policy.js';
import { publishLockEvent } from './telemetry/channels.js';
import { FairLock } from './locks/fair-lock.js';
import { FencedLock } from './locks/fenced-lock.js';
import { ReentrantLock } from './locks/reentrant-lock.js';
import { ReadWriteLock } from './locks/read-write-lock.js';
import type { RFairLock, RFencedLock, RLock, RReadWriteLock } from './locks/lock-interfaces.js';
import { SUBSCRIPTION_LINGER_MS, type LockClientOptions } from './options.js';
import { NoticeSubscriber } from './waiting/notice-subscriber.js';
import { WaiterQueues } from './waiting/waiter-queues.js';
import { defaultSubscriber, redisPortOf, subscriberOf, type PubSubFactory } from './redis/detect.js';
import type { RedisPort } from './redis/port.js';
import { LockScripts } from './scripts/registry.js';
import { detectClusterTopology, STANDALONE, type PubSubMode, type Topology } from './redis/topology.js';
import { checkAdoptOptions, checkClientOptions, checkFunction, checkLockName } from './validate.js';
import { Watchdog } from './holding/watchdog.js';
import { warnUnheard } from './unheard-warning.js';
import { ClientIdentity } from './inspect/process-identity.js';
import { inspectWithProcesses, type LockInspection } from './inspect/identities.js';
import { startRenewalThread, type RenewalThread } from './renewal-thread/renewal-thread.js';

/**
 * The entry point: one per Redis connection (ioredis or iovalkey `Redis`/`Cluster`, node-redis
 * client, cluster or sentinel). Makes locks, owns the watchdog timer and the pub/sub connection, and emits
 * `acquired`, `released`, `renewed`, `lost` ({ name, owner, reason }) and `error`.
 *
 * @example
 * const locks = new LockClient(new Redis());
 * const lock = locks.getLock('invoice:42');
 * if (await lock.tryLock(2_000, 10_000)) {
 *   try { await charge(); } finally { await lock.unlock(); }
 * }
 * await locks.close();
 */
export class LockClient extends EventEmitter<LockClientEvents> {
  /** This client's random id: the first half of every owner id it uses. */
  readonly id: string = randomUUID();
  readonly #core: LockCore;
  readonly #subscriber: NoticeSubscriber;
  readonly #identity: ClientIdentity;
  /** `renewalThread`: renews watchdog-mode holds from a worker thread. */
  readonly #thread: RenewalThread | undefined;
  #topology: Topology | undefined;
  #detecting: Promise<void> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Events already reported by a process warning because nobody listened (see emit). */
  readonly #warnedUnheard = new Set<string>();

  /**
   * @param connection the application's connection (see {@link RedisConnection}): an ioredis or
   *   iovalkey `Redis` or `Cluster`, or a connected node-redis client, cluster or sentinel; rlock
   *   does not close it.
   * @throws InvalidArgumentError on a bad connection or option.
   */
  constructor(connection: RedisConnection, options: LockClientOptions = {}) {
    super();
    const redis = redisPortOf(connection, 'redis');
    const settings = checkClientOptions(options, redis);
    const { keyPrefix, watchdogTimeoutMs, fairLockWaitTimeoutMs, maxHoldTimeMs, syncReplicas, pubsub, subscriber: given, clientName } = settings;
    this.#identity = new ClientIdentity(redis, keyPrefix, this.id, clientName);
    const subscriber: PubSubFactory = given === undefined ? defaultSubscriber(redis) : subscriberOf(given, redis);

    const onError = (error: unknown): void => void this.emit('error', error);
    const renewed = (hold: Hold): void => void this.emit('renewed', { name: hold.target.name, owner: hold.owner });
    this.#subscriber = new NoticeSubscriber(onError);
    const connectionKeyPrefix = redis.keyPrefix;
    if (redis.deployment !== 'cluster') {
      this.#topology = STANDALONE;
      this.#subscriber.attach(subscriber(false));
    }

    const scripts = new LockScripts(redis, this.id);
    // At first use: warn (`warning` event, process warning) when Redis may evict lock keys.
    const checkEviction = evictionCheck(redis, (info) => void this.emit('warning', info));
    let evictionChecked = false;
    const holds = new Holds(
      { lost: (hold, reason) => void this.emit('lost', { name: hold.target.name, owner: hold.owner, reason }) },
      this.id,
    );
    const core: Omit<LockCore, 'topology' | 'publish'> = {
      clientId: this.id,
      keyPrefix,
      watchdogTimeoutMs,
      fairLockWaitTimeoutMs,
      maxHoldTimeMs,
      redis,
      scripts,
      syncReplicas,
      waiters: new WaiterQueues({
        clientId: this.id,
        subscriber: this.#subscriber,
        scripts,
        topology: () => this.#currentTopology(),
        connectionKeyPrefix,
        lingerMs: SUBSCRIPTION_LINGER_MS,
        onError,
        waiting: () => this.#identity.touch(),
      }),
      watchdog: new Watchdog({
        scripts,
        holds,
        leaseMs: watchdogTimeoutMs,
        topology: () => this.#currentTopology(),
        syncReplicas,
        clientId: this.id,
        listener: { renewed, error: (error) => onError(toLockError(error, 'renew', undefined)) },
        renewedElsewhere: (hold) => this.#thread?.renews(hold) === true,
      }),
      holds,
      subscriber: this.#subscriber,
      events: this,
      assertOpen: () => {
        if (this.#closed) throw new LockClientClosedError('the LockClient is closed');
      },
      ready: () => {
        if (this.#topology && evictionChecked) return undefined;
        const ready = this.#topology ? Promise.resolve() : this.#detect(redis, pubsub, subscriber);
        checkEviction(ready);
        evictionChecked = true;
        return ready;
      },
    };
    // Known at once for a standalone connection, after ready() for a Cluster.
    this.#core = Object.defineProperties(core, {
      topology: { get: () => this.#currentTopology() },
      publish: { get: () => this.#currentTopology().publish },
    }) as LockCore;
    const { watchdog } = this.#core;
    this.#thread = startRenewalThread(settings.renewalThread, { leaseMs: watchdogTimeoutMs, redis, syncReplicas, holds, watchdog, listener: { renewed, error: onError } });
  }

  /**
   * Emits an event (eventemitter3). A `lost` or `error` that no listener hears is not dropped in
   * silence: the first such event of each name on this client becomes a `process.emitWarning`
   * (type `RLockWarning`, code `RLOCK_UNHEARD_LOST` / `RLOCK_UNHEARD_ERROR`). Adding a listener
   * for the event silences it.
   */
  override emit<T extends EventEmitter.EventNames<LockClientEvents>>(
    event: T,
    ...args: EventEmitter.EventArgs<LockClientEvents, T>
  ): boolean {
    publishLockEvent(this.id, event, args[0]);
    if (event === 'acquired') this.#identity.touch();
    const heard = super.emit(event, ...args);
    if (!heard) warnUnheard(this.#warnedUnheard, event, args[0]);
    return heard;
  }

  #currentTopology(): Topology {
    if (!this.#topology) throw new Error('rlock: the Cluster topology is not known yet (await core.ready())');
    return this.#topology;
  }

  /** One look at a Cluster (memoised once it succeeds): pub/sub mode, renewal batching. */
  #detect(cluster: RedisPort, requested: PubSubMode | 'auto', subscriber: PubSubFactory): Promise<void> {
    this.#detecting ??= detectClusterTopology(cluster, requested).then(
      (topology) => {
        if (this.#closed) return;
        this.#topology = topology;
        this.#subscriber.attach(subscriber(topology.pubsub === 'sharded'));
      },
      (error: unknown) => {
        this.#detecting = undefined;
        throw error;
      },
    );
    return this.#detecting;
  }

  /** A reentrant, non-fair lock. @throws InvalidArgumentError for an empty or non-string name. */
  getLock(name: string): RLock {
    return new ReentrantLock(this.#core, name);
  }

  /**
   * A read-write lock: many readers or one writer, both reentrant; the writer may also read.
   * @throws InvalidArgumentError for an empty or non-string name.
   * @example
   * const rw = locks.getReadWriteLock('catalog');
   * await rw.readLock().withLock(() => readCatalog());      // readers share it
   * await rw.writeLock().withLock(() => rebuildCatalog());  // a writer has it alone
   */
  getReadWriteLock(name: string): RReadWriteLock {
    return new ReadWriteLock(this.#core, name);
  }

  /**
   * A reentrant lock with fencing tokens: each acquisition from unlocked gets a greater token.
   * @throws InvalidArgumentError for an empty or non-string name.
   * @example
   * const lock = locks.getFencedLock('ledger');
   * const token = await lock.lockAndGetToken();
   * try { await storage.write(entry, { token }); } finally { await lock.unlock(); }
   */
  getFencedLock(name: string): RFencedLock {
    return new FencedLock(this.#core, name);
  }

  /**
   * A reentrant, fair lock: waiting calls get it in the order they first asked for it, across
   * all clients and processes; a release wakes only the next in line.
   * @throws InvalidArgumentError for an empty or non-string name.
   */
  getFairLock(name: string): RFairLock {
    return new FairLock(this.#core, name);
  }

  /**
   * A counting semaphore: at most `options.permits` permits out at once across every client.
   * Permits are leases (watchdog-renewed unless a `leaseTime` is given); `fair: true` hands them
   * out in strict arrival order. See docs/synchronizers.md.
   * @throws InvalidArgumentError for a bad name or options.
   * @example
   * const exports = locks.getSemaphore('exports', { permits: 5 });
   * await exports.withPermit(() => runExport());
   */
  getSemaphore(name: string, options: SemaphoreOptions): RSemaphore {
    return new Semaphore(this.#core, name, options);
  }

  /**
   * A count-down latch: `wait()` resolves in every process once `countDown()` reached 0.
   * @throws InvalidArgumentError for an empty or non-string name.
   */
  getCountDownLatch(name: string): RCountDownLatch {
    return new CountDownLatch(this.#core, name);
  }

  /**
   * Takes over a hold another process handed off (`lease.handOff()`, `permit.handOff()`): the
   * same hold in Redis (same owner, hold count and fencing token; a permit's permits), renewed by
   * this client's watchdog in watchdog mode (`maxHoldTime` counted from now) or kept to its fixed
   * lease, and released by the returned Lease (a Permit for a permit's handle). Of two calls with
   * one handle, in any processes, exactly one gets the hold.
   * @throws InvalidArgumentError, before anything is sent, for a handle whose fields do not fit its
   *   kind, of another `keyPrefix`, or a RedLock's (use `redLock.adopt(handle)`); an unknown option.
   * @throws LockLostError when the hold ended (not adopted in time) or was adopted already.
   * @example
   * const lease = await locks.adopt(job.data.handle);
   * try { await work(lease.signal); } finally { await lease.release(); }
   */
  adopt(handle: LeaseHandle & { kind: 'permit' }, options?: { maxHoldTime?: number }): Promise<Permit>;
  adopt(handle: LeaseHandle, options?: { maxHoldTime?: number }): Promise<Lease>;
  async adopt(handle: LeaseHandle, options?: { maxHoldTime?: number }): Promise<Lease | Permit> {
    const checked = checkLeaseHandle(handle);
    const maxHoldMs = checkAdoptOptions(options, checked.name);
    return adoptHandle(this.#core, this, checked, maxHoldMs);
  }

  /**
   * A leader election: `campaign()` resolves when the caller leads, with an `epoch` greater than
   * every earlier leader's; `leader()` and `observe()` tell who leads, from any client.
   * @throws InvalidArgumentError for an empty or non-string name.
   * @example
   * const leadership = await locks.getElection('scheduler').campaign({ value: hostname() });
   * leadership.signal.addEventListener('abort', stopLeading);
   */
  getElection(name: string): RElection {
    return new Election(this.#core, name);
  }

  /**
   * Runs `fn` unless another run of `name` holds the lock ("at most one at a time, skip if
   * taken", for a job scheduled on many replicas): one attempt; the lock is held with the fixed
   * lease `atMostFor` while `fn(lease)` runs, then kept until `atLeastFor` after the start.
   * Resolves `{ ran: true, value }`, or `{ ran: false }` when the lock was taken; `fn`'s error
   * propagates.
   * @throws InvalidArgumentError for a bad name, `fn` or options (`atMostFor` is required).
   * @example
   * await locks.runExclusive('nightly-report', () => sendReport(), { atMostFor: 600_000, atLeastFor: 30_000 });
   */
  runExclusive<T>(name: string, fn: (lease: Lease) => T | Promise<T>, options: RunExclusiveOptions): Promise<RunExclusiveResult<T>> {
    return runExclusive(this.#core, name, fn, options);
  }

  /**
   * Lock `name` of any kind as `rlock inspect` shows it, each holder and waiter with its `process`
   * (null: unknown); undefined when nothing of it is in Redis. @throws InvalidArgumentError, LockRedisError
   */
  async inspect(name: string): Promise<LockInspection | undefined> {
    this.#core.assertOpen();
    return inspectWithProcesses(this.#core.scripts, this.#core.keyPrefix, checkLockName(name));
  }

  /**
   * Runs `fn` in a fresh lock context: every lock call inside (also after awaits) uses the
   * context's owner, so nested calls on the same lock re-enter it.
   */
  runInContext<T>(fn: () => T): T {
    return runInNewContext(checkFunction<() => T>(fn, 'fn'));
  }

  /**
   * Stops renewals and wake-up subscriptions; waiting calls reject with LockClientClosedError,
   * and the Leases of the holds it stops renewing abort with one; its process identity is deleted.
   * Held locks are not released: they expire with their lease. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#core.watchdog.close();
      this.#core.holds.close(new LockClientClosedError('the LockClient was closed: the lock is no longer renewed'));
      const leaving = this.#core.waiters.close(new LockClientClosedError('the LockClient was closed while waiting'));
      // A Cluster still being looked at is not waited for: once closed, #detect attaches no subscriber.
      await Promise.all([leaving, this.#subscriber.close(), this.#identity.close(), this.#thread?.close()]);
    })();
    return this.#closing;
  }
}
