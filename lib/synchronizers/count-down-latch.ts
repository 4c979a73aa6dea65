import type { LockCore } from '../core.js';
import { InvalidArgumentError } from '../errors.js';
import { SUBSCRIPTION_LINGER_MS } from '../options.js';
import { latchKeys, type LatchKeys } from '../keys.js';
import type { SynchronizerScripts } from '../scripts/semaphore-scripts.js';
import { checkLockName, checkOptions, checkSignal, checkWaitTime } from '../validate.js';
import { raceDeadline, TIMED_OUT } from '../waiting/wait.js';
import { LatchWaiterQueue } from './latch-waiter-queue.js';

/** Options of `CountDownLatch.wait`. */
export interface LatchWaitOptions {
  /** ms to wait; 0 checks once. Omitted: waits without limit. */
  waitTime?: number;
  /** Aborts the wait (rejecting with the signal's reason). */
  signal?: AbortSignal;
}

/** A count-down latch shared by every client: `locks.getCountDownLatch(name)`. */
export interface RCountDownLatch {
  /** The latch's name. */
  readonly name: string;
  /** Sets the count if the latch is not set (count 0 or absent); true if this call set it. */
  trySetCount(count: number): Promise<boolean>;
  /** Counts down once (never below 0; nothing on an unset latch); resolves with the count left. */
  countDown(): Promise<number>;
  /** The count left; 0 when unset. */
  getCount(): Promise<number>;
  /** True once the count is 0 (at once on an unset latch), false when `waitTime` ran out. */
  wait(options?: LatchWaitOptions): Promise<boolean>;
}

const LATCH_WAIT_OPTIONS = ['waitTime', 'signal'];

/**
 * A count-down latch: a hash holding the count. Reaching 0 deletes the key and wakes every
 * waiting client with one notice each (each wakes all its local waiters). Every changing call
 * carries a request id, so a resend is applied once.
 */
export class CountDownLatch implements RCountDownLatch {
  readonly name: string;
  readonly #core: LockCore;
  readonly #keys: LatchKeys;
  readonly #scripts: SynchronizerScripts;

  constructor(core: LockCore, name: unknown) {
    this.name = checkLockName(name);
    this.#core = core;
    this.#keys = latchKeys(core.keyPrefix, this.name);
    this.#scripts = core.scripts.synchronizers;
  }

  async trySetCount(count: number): Promise<boolean> {
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) {
      throw new InvalidArgumentError(`\`count\` must be a whole number ≥ 1, got ${String(count)}`, { lockName: this.name });
    }
    await this.#open();
    return this.#core.scripts.requests.send(this.#keys.latch, undefined, (request) => this.#scripts.latchTrySet(this.#keys, count, request));
  }

  async countDown(): Promise<number> {
    await this.#open();
    return this.#core.scripts.requests.send(this.#keys.latch, undefined, (request) => this.#scripts.latchCountDown(this.#keys, request, this.#core.publish));
  }

  async getCount(): Promise<number> {
    await this.#open();
    return this.#scripts.latchWait(this.#keys, '', 0);
  }

  async wait(options?: LatchWaitOptions): Promise<boolean> {
    const raw = checkOptions(options, LATCH_WAIT_OPTIONS, this.name);
    const waitMs = checkWaitTime(raw.waitTime, this.name);
    const signal = checkSignal(raw.signal, this.name);
    await this.#open();
    signal?.throwIfAborted();
    const core = this.#core;
    const keys = this.#keys;
    const deadline = waitMs === undefined ? Infinity : performance.now() + waitMs;
    // A waiting client registers again every third of the watchdog timeout; its entry outlives
    // that by a second, so the waiter set cannot outlive clients that all died.
    const checkInMs = core.watchdogTimeoutMs / 3;
    const ask = async (register: boolean): Promise<number | typeof TIMED_OUT> =>
      raceDeadline(this.#scripts.latchWait(keys, register ? core.waiters.listenerId : '', checkInMs), deadline, signal);
    const me = Symbol('latch waiter');
    let queue = core.waiters.peekChannel<LatchWaiterQueue>(keys.wakePrefix);
    const wasSubscribed = queue?.subscribed ?? false;
    queue?.enter(me);
    let opened = false;
    try {
      let count = await ask(queue !== undefined);
      if (count === TIMED_OUT) return false;
      if (count === 0 || waitMs === 0) return (opened = count === 0);
      if (!queue) {
        queue = this.#queue();
        queue.enter(me);
      }
      if (!wasSubscribed) {
        if ((await raceDeadline(queue.subscribe(), deadline, signal)) === TIMED_OUT) return false;
      }
      // Registered once the channel is live: a count down to 0 from now on reaches this client.
      count = await ask(true);
      while (count !== TIMED_OUT && count > 0) {
        const remaining = deadline - performance.now();
        if (remaining <= 0) return false;
        await queue.sleep(me, Math.min(checkInMs, remaining), signal);
        if (deadline <= performance.now()) return false;
        count = await ask(true);
      }
      return (opened = count === 0);
    } finally {
      queue?.leave(me, opened);
    }
  }

  #queue(): LatchWaiterQueue {
    const core = this.#core;
    const keys = this.#keys;
    return core.waiters.channel(
      keys.wakePrefix,
      (hooks) =>
        new LatchWaiterQueue(hooks, SUBSCRIPTION_LINGER_MS, () => {
          this.#scripts.latchLeave(keys, core.waiters.listenerId).catch((error: unknown) => core.events.emit('error', error));
        }),
    );
  }

  async #open(): Promise<void> {
    this.#core.assertOpen();
    await this.#core.ready();
  }
}
