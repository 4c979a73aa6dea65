import type { LockKeys } from '../keys.js';
import type { PublishCommand } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import type { CallRequest } from './request-window.js';
import { holdsLeft, type HoldsLeft } from './script-status.js';
import fairAcquire from './fair-acquire-3.lua';
import fairForceUnlock from './fair-force-unlock-5.lua';
import fairLeave from './fair-leave-4.lua';
import fairRelease from './fair-release-5.lua';

/** The fair lock's scripts: acquire in queue order, release to the head, leave the queue, force-unlock. */
export class FairLockScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  async acquire(keys: LockKeys, owner: string, leaseMs: number, waiterId: string, waitTimeoutMs: number, request: CallRequest): Promise<number | null> {
    const args = [keys.lock, keys.queue, keys.queueTimeouts, owner, leaseMs, waiterId, waitTimeoutMs, request.id];
    const reply = await this.#runner.run(fairAcquire, 'acquire', keys.name, args, 'lock', request);
    return reply === null ? null : Number(reply);
  }
  /** Fair lock: like {@link release}; when the lock is freed, the head of the queue is told it is its turn. */
  async release(keys: LockKeys, owner: string, reExpireMs: number, request: CallRequest, publish: PublishCommand, recordMs: number): Promise<HoldsLeft> {
    const args = [...fairKeys(keys), keys.records, owner, reExpireMs, request.id, publish, recordMs];
    return holdsLeft(await this.#runner.run(fairRelease, 'release', keys.name, args, 'lock', request));
  }
  /** Fair lock: a waiting call gave up; true if it was still queued. */
  async leave(keys: LockKeys, waiterId: string, publish: PublishCommand): Promise<boolean> {
    return Number(await this.#runner.run(fairLeave, 'acquire', keys.name, [...fairKeys(keys), waiterId, publish])) === 1;
  }
  /** Fair lock: deletes the lock whoever holds it, then tells the head; true if there was a lock. */
  async forceUnlock(keys: LockKeys, publish: PublishCommand, request: CallRequest): Promise<boolean> {
    const args = [...fairKeys(keys), keys.records, publish, request.id];
    return Number(await this.#runner.run(fairForceUnlock, 'forceUnlock', keys.name, args, 'lock', request)) === 1;
  }
}

/** The four keys of the fair scripts that may hand the lock on. */
function fairKeys(keys: LockKeys): string[] {
  return [keys.lock, keys.queue, keys.queueTimeouts, keys.turnPrefix];
}

