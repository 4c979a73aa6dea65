import { toLockError } from '../errors.js';
import fairQueueLua from './fair-queue.lua';
import latchCountDownLua from './latch-count-down-4.lua';
import latchTrySetLua from './latch-try-set-2.lua';
import latchWaitLua from './latch-wait-2.lua';
import noticeLua from './notice.lua';
import type { PublishCommand } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import type { CallRequest } from './request-window.js';
import callLogLua from './call-log.lua';
import requestWindowLua from './request-window.lua';
import semaphoreAcquireLua from './semaphore-acquire-8.lua';
import semaphoreAvailableLua from './semaphore-available-1.lua';
import semaphoreFairAcquireLua from './semaphore-fair-acquire-8.lua';
import semaphoreFairLeaveLua from './semaphore-fair-leave-8.lua';
import semaphorePassWakeLua from './semaphore-pass-wake-8.lua';
import semaphoreReleaseLua from './semaphore-release-8.lua';
import semaphoreLua from './semaphore.lua';
import semaphoreWaitersLua from './semaphore-waiters.lua';
import serverTimeLua from './server-time.lua';
import wakeAllLua from './wake-all.lua';
import wakeOneLua from './wake-one.lua';

// The semaphore's shared functions (semaphore.lua, then semaphore-waiters.lua) use drop_expired
// (fair-queue.lua), server_ms() and notice().
const sem = serverTimeLua + noticeLua + fairQueueLua + semaphoreLua + semaphoreWaitersLua;

// Versioned names, as in registry.ts: two rlock versions sharing a connection never swap scripts.
// The scripts that change a semaphore take the same keys (semaphoreKeyList, semaphore.lua).
const COMMANDS = {
  semAcquire: { name: 'rlockSemAcquireV6', numberOfKeys: 8, lua: sem + semaphoreAcquireLua },
  semRelease: { name: 'rlockSemReleaseV6', numberOfKeys: 8, lua: sem + semaphoreReleaseLua },
  semPassWake: { name: 'rlockSemPassWakeV6', numberOfKeys: 8, lua: sem + semaphorePassWakeLua },
  semFairAcquire: { name: 'rlockSemFairAcquireV6', numberOfKeys: 8, lua: sem + semaphoreFairAcquireLua },
  semFairLeave: { name: 'rlockSemFairLeaveV6', numberOfKeys: 8, lua: sem + semaphoreFairLeaveLua },
  semAvailable: { name: 'rlockSemAvailableV3', numberOfKeys: 1, lua: sem + semaphoreAvailableLua },
  latchTrySet: { name: 'rlockLatchTrySetV2', numberOfKeys: 2, lua: requestWindowLua + callLogLua + latchTrySetLua },
  latchCountDown: { name: 'rlockLatchCountDownV3', numberOfKeys: 4, lua: noticeLua + wakeOneLua + wakeAllLua + requestWindowLua + callLogLua + latchCountDownLua },
  latchWait: { name: 'rlockLatchWaitV1', numberOfKeys: 2, lua: serverTimeLua + latchWaitLua },
} as const;

/** Every key and channel of one semaphore; all share the `{<prefix>:<name>}` hash tag. */
export interface SemaphoreKeys {
  readonly name: string;
  /** Sorted set of the permits out (semaphore.lua). */
  readonly permits: string;
  /**
   * Non-fair: waiting clients and the promises made to woken clients (semaphore.lua), the need
   * hints other than '1,1', their wake-up channel prefix.
   */
  readonly waiters: string;
  readonly needs: string;
  readonly wakePrefix: string;
  /** Non-fair: how many permits a promise of more than one holds. */
  readonly promises: string;
  /** Fair: queue of waiting calls, their timeouts, their turn channel prefix. */
  readonly queue: string;
  readonly timeouts: string;
  readonly turnPrefix: string;
}

export function semaphoreKeys(keyPrefix: string, name: string): SemaphoreKeys {
  const base = `{${keyPrefix}:${name}}:semaphore`;
  return {
    name,
    permits: base,
    waiters: `${base}:waiters`,
    needs: `${base}:needs`,
    wakePrefix: `${base}:wake:`,
    promises: `${base}:promises`,
    queue: `${base}:queue`,
    timeouts: `${base}:timeouts`,
    turnPrefix: `${base}:turn:`,
  };
}

/** The keys every script that changes a semaphore takes, in the order semaphore.lua lists them. */
function semaphoreKeyList(keys: SemaphoreKeys): string[] {
  return [keys.permits, keys.waiters, keys.needs, keys.wakePrefix, keys.promises, keys.queue, keys.timeouts, keys.turnPrefix];
}

/** Every key and channel of one count-down latch; all share the `{<prefix>:<name>}` hash tag. */
export interface LatchKeys {
  readonly name: string;
  /** Hash: 'count' -> count left; absent when unset or counted down. */
  readonly latch: string;
  readonly waiters: string;
  readonly wakePrefix: string;
  /** Records answering resent calls ('l:' + request id), a minute each. */
  readonly records: string;
}

export function latchKeys(keyPrefix: string, name: string): LatchKeys {
  const base = `{${keyPrefix}:${name}}:latch`;
  return { name, latch: base, waiters: `${base}:waiters`, wakePrefix: `${base}:wake:`, records: `{${keyPrefix}:${name}}:rec:` };
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
    const reply = await this.#runner.run(COMMANDS.semAcquire, 'acquire', keys.name, args, 'semaphore');
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
    const reply = await this.#runner.run(COMMANDS.semFairAcquire, 'acquire', keys.name, args, 'semaphore');
    return reply === null ? null : Number(reply);
  }

  /** 1 when given back now, 0 when not out (any more). */
  async release(keys: SemaphoreKeys, member: string, limit: number, publish: PublishCommand): Promise<number> {
    const args = [...semaphoreKeyList(keys), member, limit, publish];
    return Number(await this.#runner.run(COMMANDS.semRelease, 'release', keys.name, args, 'semaphore'));
  }

  /**
   * A woken client hands back `permits` promised to it ('all': everything; 0: none), and leaves
   * the waiter set if `leave`; the free permits go to the next clients.
   */
  async passWake(keys: SemaphoreKeys, clientId: string, limit: number, publish: PublishCommand, permits: number | 'all', leave: boolean): Promise<void> {
    const args = [...semaphoreKeyList(keys), clientId, limit, publish, permits, leave ? '1' : '0'];
    await this.#runner.run(COMMANDS.semPassWake, 'acquire', keys.name, args, 'semaphore');
  }

  async fairLeave(keys: SemaphoreKeys, waiterId: string, limit: number, publish: PublishCommand): Promise<void> {
    const args = [...semaphoreKeyList(keys), waiterId, limit, publish];
    await this.#runner.run(COMMANDS.semFairLeave, 'acquire', keys.name, args, 'semaphore');
  }

  async available(keys: SemaphoreKeys, limit: number): Promise<number> {
    return Number(await this.#runner.run(COMMANDS.semAvailable, 'query', keys.name, [keys.permits, limit], 'semaphore'));
  }

  /** True when this call set the count. */
  async latchTrySet(keys: LatchKeys, count: number, request: CallRequest): Promise<boolean> {
    const args = [keys.latch, keys.records, count, request.id];
    return Number(await this.#runner.run(COMMANDS.latchTrySet, 'acquire', keys.name, args, 'latch', request)) === 1;
  }

  /** The count left. */
  async latchCountDown(keys: LatchKeys, request: CallRequest, publish: PublishCommand): Promise<number> {
    const args = [keys.latch, keys.waiters, keys.wakePrefix, keys.records, request.id, publish];
    return Number(await this.#runner.run(COMMANDS.latchCountDown, 'release', keys.name, args, 'latch', request));
  }

  /** The count left (0: open); registers `clientId` as waiting unless it is ''. */
  async latchWait(keys: LatchKeys, clientId: string, sleepMs: number): Promise<number> {
    return Number(await this.#runner.run(COMMANDS.latchWait, 'query', keys.name, [keys.latch, keys.waiters, clientId, sleepMs], 'latch'));
  }

  async latchLeave(keys: LatchKeys, clientId: string): Promise<void> {
    try {
      await this.#runner.port.command(['zrem', keys.waiters, clientId], keys.waiters);
    } catch (error) {
      throw toLockError(error, 'query', keys.name, 'latch');
    }
  }
}
