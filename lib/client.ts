import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import type { Redis } from 'ioredis';
import { runInNewContext } from './context.js';
import type { LockClientEvents, LockCore } from './core.js';
import { InvalidArgumentError, LockClientClosedError, LockLostError } from './errors.js';
import { FairLock } from './locks/fair-lock.js';
import { ReentrantLock } from './locks/lock.js';
import type { RLock } from './locks/rlock.js';
import { DEFAULTS, SUBSCRIPTION_LINGER_MS, type LockClientOptions } from './options.js';
import { NoticeSubscriber } from './pubsub/subscriber.js';
import { WaiterQueues } from './pubsub/waiter-queues.js';
import { LockScripts, type RedisConnection } from './scripts/registry.js';
import { checkFunction, checkKeyPrefix, checkObject, checkPositiveDuration } from './validate.js';
import { Watchdog } from './watchdog.js';

const KNOWN_OPTIONS = new Set(['keyPrefix', 'watchdogTimeout', 'fairLockWaitTimeout', 'subscriber']);

function isConnection(value: unknown): value is RedisConnection {
  return typeof value === 'object' && value !== null && typeof (value as Redis).defineCommand === 'function';
}

/**
 * The entry point: one per Redis connection (ioredis `Redis` or `Cluster`). Makes locks, owns
 * the watchdog timer and the pub/sub connection, and emits `acquired`, `released`, `renewed`,
 * `lost` ({ name, owner, reason }) and `error`.
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
  readonly #redis: RedisConnection;
  #connectionEpoch = 0;
  #closed = false;
  #closing: Promise<void> | undefined;

  /**
   * @param redis an ioredis `Redis` (or `Cluster`) connection; rlock does not close it.
   * @throws InvalidArgumentError on a bad connection or option.
   */
  constructor(redis: RedisConnection, options: LockClientOptions = {}) {
    super();
    if (!isConnection(redis)) throw new InvalidArgumentError('`redis` must be an ioredis Redis or Cluster connection');
    const raw = checkObject(options, 'options');
    for (const key of Object.keys(raw)) {
      if (!KNOWN_OPTIONS.has(key)) {
        throw new InvalidArgumentError(`unknown option \`${key}\` (known: ${[...KNOWN_OPTIONS].join(', ')})`);
      }
    }
    const keyPrefix = raw.keyPrefix === undefined ? DEFAULTS.keyPrefix : checkKeyPrefix(raw.keyPrefix);
    const watchdogTimeoutMs =
      raw.watchdogTimeout === undefined ? DEFAULTS.watchdogTimeout : checkPositiveDuration(raw.watchdogTimeout, 'watchdogTimeout');
    const fairLockWaitTimeoutMs =
      raw.fairLockWaitTimeout === undefined
        ? DEFAULTS.fairLockWaitTimeout
        : checkPositiveDuration(raw.fairLockWaitTimeout, 'fairLockWaitTimeout');
    if (raw.subscriber !== undefined && !isConnection(raw.subscriber)) {
      throw new InvalidArgumentError('`subscriber` must be an ioredis Redis connection');
    }

    const onError = (error: unknown): void => void this.emit('error', error);
    redis.on('close', this.#onConnectionClose);
    this.#redis = redis;
    const subscriberConn = (raw.subscriber as Redis | undefined) ?? (redis.duplicate() as Redis);
    this.#subscriber = new NoticeSubscriber(subscriberConn, raw.subscriber === undefined, onError);
    const scripts = new LockScripts(redis);
    const publish = 'publish';
    const core: LockCore = {
      clientId: this.id,
      keyPrefix,
      watchdogTimeoutMs,
      fairLockWaitTimeoutMs,
      redis,
      scripts,
      publish,
      waiters: new WaiterQueues({
        clientId: this.id,
        subscriber: this.#subscriber,
        scripts,
        publish,
        connectionKeyPrefix: redis.options.keyPrefix ?? '',
        lingerMs: SUBSCRIPTION_LINGER_MS,
        onError,
      }),
      watchdog: new Watchdog(scripts, watchdogTimeoutMs, {
        renewed: (hold) => void this.emit('renewed', { name: hold.keys.name, owner: hold.owner }),
        lost: (hold, reason) => {
          const error = new LockLostError(`lock "${hold.keys.name}" was lost (${reason})`, reason, {
            lockName: hold.keys.name,
          });
          for (const lease of hold.leases) lease.abort(error);
          this.emit('lost', { name: hold.keys.name, owner: hold.owner, reason });
        },
        error: onError,
      }),
      unscopedOwners: new Map(),
      events: this,
      connectionEpoch: () => this.#connectionEpoch,
      assertOpen: () => {
        if (this.#closed) throw new LockClientClosedError('the LockClient is closed');
      },
    };
    this.#core = core;
  }

  readonly #onConnectionClose = (): void => {
    this.#connectionEpoch += 1;
  };

  /** A reentrant, non-fair lock. @throws InvalidArgumentError for an empty or non-string name. */
  getLock(name: string): RLock {
    return new ReentrantLock(this.#core, name);
  }

  /**
   * A reentrant, fair lock: waiting calls get it in the order they first asked for it, across
   * all clients and processes; a release wakes only the next in line.
   * @throws InvalidArgumentError for an empty or non-string name.
   */
  getFairLock(name: string): RLock {
    return new FairLock(this.#core, name);
  }

  /**
   * Runs `fn` in a fresh lock context: every lock call inside (also after awaits) uses the
   * context's owner, so nested calls on the same lock re-enter it.
   */
  runInContext<T>(fn: () => T): T {
    return runInNewContext(checkFunction<() => T>(fn, 'fn'));
  }

  /**
   * Stops renewals and wake-up subscriptions; waiting calls reject with LockClientClosedError.
   * Held locks are not released: they expire with their lease. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#redis.off('close', this.#onConnectionClose);
      this.#core.watchdog.close();
      this.#core.waiters.close(new LockClientClosedError('the LockClient was closed while waiting'));
      await this.#subscriber.close();
    })();
    return this.#closing;
  }
}
