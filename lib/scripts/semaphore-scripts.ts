import { toLockError } from '../errors.js';
import latchCountDown from './latch-count-down-4.lua';
import latchTrySet from './latch-try-set-2.lua';
import latchWait from './latch-wait-2.lua';
import type { LatchKeys, SemaphoreKeys } from '../keys.js';
import type { PublishCommand } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import type { CallRequest } from './request-window.js';
import semAcquire from './semaphore-acquire-8.lua';
import semAvailable from './semaphore-available-1.lua';
import semFairAcquire from './semaphore-fair-acquire-8.lua';
import semFairLeave from './semaphore-fair-leave-8.lua';
import semPassWake from './semaphore-pass-wake-8.lua';
import semRelease from './semaphore-release-8.lua';

// The scripts that change a semaphore take the same keys (semaphoreKeyList, semaphore.lua).

/** The keys every script that changes a semaphore takes, in the order semaphore.lua lists them. */
function semaphoreKeyList(keys: SemaphoreKeys): string[] {
  return [keys.permits, keys.waiters, keys.needs, keys.wakePrefix, keys.promises, keys.queue, keys.timeouts, keys.turnPrefix];
}

/**
 * The semaphore and latch scripts. Failures come out as LockRedisError naming the object and
 * the operation.
 */
export class SynchronizerScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  /**
   * Non-fair: null when granted, else ms until the earliest lease ends. `hint`: the client's need
   * hint with this request; `othersHint`: without it ('' if none); `promised`: permits promised
   * to the client that this attempt uses.
   */
  async acquire(
    keys: SemaphoreKeys,
    member: string,
    limit: number,
    leaseMs: number,
    clientId: string,
    wait: { mode: string; hint: string; othersHint: string; promised: number },
    publish: PublishCommand,
  ): Promise<number | null> {
    const args = [...semaphoreKeyList(keys), member, limit, leaseMs, clientId, wait.mode, wait.hint, wait.othersHint, wait.promised, publish];
    const reply = await this.#runner.run(semAcquire, 'acquire', keys.name, args, 'semaphore');
    return reply === null ? null : Number(reply);
  }

  /** Fair: null when granted, else the latest time to ask again, ms. `first`: the waiter's first attempt. */
  async fairAcquire(
    keys: SemaphoreKeys,
    member: string,
    limit: number,
    leaseMs: number,
    waiterId: string,
    waitTimeoutMs: number,
    publish: PublishCommand,
    first = false,
  ): Promise<number | null> {
    const args = [...semaphoreKeyList(keys), member, limit, leaseMs, waiterId, waitTimeoutMs, publish, first ? '1' : '0'];
    const reply = await this.#runner.run(semFairAcquire, 'acquire', keys.name, args, 'semaphore');
    return reply === null ? null : Number(reply);
  }

  /** 1 when given back now, 0 when not out (any more). */
  async release(keys: SemaphoreKeys, member: string, limit: number, publish: PublishCommand): Promise<number> {
    const args = [...semaphoreKeyList(keys), member, limit, publish];
    return Number(await this.#runner.run(semRelease, 'release', keys.name, args, 'semaphore'));
  }

  /**
   * A woken client hands back `permits` promised to it ('all': everything; 0: none), and leaves
   * the waiter set if `leave`; the free permits go to the next clients.
   */
  async passWake(keys: SemaphoreKeys, clientId: string, limit: number, publish: PublishCommand, permits: number | 'all', leave: boolean): Promise<void> {
    const args = [...semaphoreKeyList(keys), clientId, limit, publish, permits, leave ? '1' : '0'];
    await this.#runner.run(semPassWake, 'acquire', keys.name, args, 'semaphore');
  }

  async fairLeave(keys: SemaphoreKeys, waiterId: string, limit: number, publish: PublishCommand): Promise<void> {
    const args = [...semaphoreKeyList(keys), waiterId, limit, publish];
    await this.#runner.run(semFairLeave, 'acquire', keys.name, args, 'semaphore');
  }

  async available(keys: SemaphoreKeys, limit: number): Promise<number> {
    return Number(await this.#runner.run(semAvailable, 'query', keys.name, [keys.permits, limit], 'semaphore'));
  }

  /** True when this call set the count. */
  async latchTrySet(keys: LatchKeys, count: number, request: CallRequest): Promise<boolean> {
    const args = [keys.latch, keys.records, count, request.id];
    return Number(await this.#runner.run(latchTrySet, 'acquire', keys.name, args, 'latch', request)) === 1;
  }

  /** The count left. */
  async latchCountDown(keys: LatchKeys, request: CallRequest, publish: PublishCommand): Promise<number> {
    const args = [keys.latch, keys.waiters, keys.wakePrefix, keys.records, request.id, publish];
    return Number(await this.#runner.run(latchCountDown, 'release', keys.name, args, 'latch', request));
  }

  /** The count left (0: open); registers `clientId` as waiting unless it is ''. */
  async latchWait(keys: LatchKeys, clientId: string, sleepMs: number): Promise<number> {
    return Number(await this.#runner.run(latchWait, 'query', keys.name, [keys.latch, keys.waiters, clientId, sleepMs], 'latch'));
  }

  async latchLeave(keys: LatchKeys, clientId: string): Promise<void> {
    try {
      await this.#runner.port.command(['zrem', keys.waiters, clientId], keys.waiters);
    } catch (error) {
      throw toLockError(error, 'query', keys.name, 'latch');
    }
  }
}
