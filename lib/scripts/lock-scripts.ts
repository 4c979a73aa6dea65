import type { FencedLockKeys, LockKeys, WaitTarget } from '../keys.js';
import type { PublishCommand, ReplicaAck, WaiterMode } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import type { CallRequest } from './request-window.js';
import { toLockError, type ObjectKind } from '../errors.js';
import { holdsLeft, type HoldsLeft } from './script-status.js';
import acquire from './acquire-2.lua';
import fencedAcquire from './fenced-acquire-3.lua';
import forceUnlock from './force-unlock-4.lua';
import passWake from './pass-wake-4.lua';
import release from './release-2.lua';

const nullOrNumber = (reply: unknown): number | null => (reply === null ? null : Number(reply));

/** An acquire script's answer: acquired (sent at `sentAt`, performance.now() ms), or the holder's PTTL (ms, -1 = no TTL). */
export type LockAttempt = { readonly acquired: true; readonly sentAt: number } | { readonly acquired: false; readonly ttlMs: number };

/** The acquire script's arguments. A single attempt (WaiterMode.Single) never registers as a waiter: its client id is not sent. */
function acquireArgs(keys: LockKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode, request: CallRequest): (string | number)[] {
  return [keys.lock, keys.waiters, owner, leaseMs, mode === '0' ? '' : clientId, mode, request.id];
}

/** The scripts of the exclusive locks (plain and fenced): acquire, release, force-unlock, wake-up hand-on. */
export class ExclusiveLockScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  /** nil (null) when acquired or re-entered, else the holder's PTTL (ms, -1 = no TTL). */
  acquire(keys: LockKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode, request: CallRequest): Promise<number | null> {
    return this.#runner.runAs(acquire, 'acquire', keys.name, acquireArgs(keys, owner, leaseMs, clientId, mode, request), nullOrNumber, request);
  }
  /**
   * One acquisition attempt (the acquire script): acquired, with the time it was sent (the lease
   * counts from there), or not, with the holder's PTTL. The reply is read in the call's own step.
   */
  attempt(keys: LockKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode, request: CallRequest): Promise<LockAttempt> {
    const args = acquireArgs(keys, owner, leaseMs, clientId, mode, request);
    const sentAt = performance.now();
    return this.#runner.runAs(acquire, 'acquire', keys.name, args, (reply) => (reply === null ? { acquired: true, sentAt } : { acquired: false, ttlMs: Number(reply) }), request);
  }
  /** The fencing token when acquired or re-entered, else the holder's PTTL (ms, -1 = no TTL). */
  async fencedAcquire(
    keys: FencedLockKeys,
    owner: string,
    leaseMs: number,
    clientId: string,
    mode: WaiterMode,
    request: CallRequest,
  ): Promise<{ token: number } | { ttlMs: number }> {
    const args = [keys.lock, keys.waiters, keys.token, owner, leaseMs, clientId, mode, request.id];
    const reply = await this.#runner.run(fencedAcquire, 'acquire', keys.name, args, 'lock', request);
    return Array.isArray(reply) ? { token: Number(reply[0]) } : { ttlMs: Number(reply) };
  }
  /** The owner's holds left (0: the lock is free now), or ScriptStatus.NotHeld. */
  release(keys: LockKeys, owner: string, reExpireMs: number, request: CallRequest, publish: PublishCommand, recordMs: number): Promise<HoldsLeft> {
    // The wake channel and record prefixes are the lock key's (release-2.lua).
    const args = [keys.lock, keys.waiters, owner, reExpireMs, request.id, publish, recordMs];
    return this.#runner.runAs(release, 'release', keys.name, args, holdsLeft, request);
  }
  /** Deletes the lock whoever holds it; true if there was one. Once per `request`. */
  async forceUnlock(keys: LockKeys, publish: PublishCommand, request: CallRequest): Promise<boolean> {
    const args = [keys.lock, keys.waiters, keys.wakePrefix, keys.records, publish, request.id];
    return Number(await this.#runner.run(forceUnlock, 'forceUnlock', keys.name, args, 'lock', request)) === 1;
  }
  /** Leaves the waiter set and, if the lock is free, wakes the next client in line. */
  async passWake(target: WaitTarget, clientId: string, publish: PublishCommand): Promise<boolean> {
    const { lock, waiters, handOnWaiters, handOnWakePrefix } = target;
    const args = [lock, waiters, handOnWaiters, handOnWakePrefix, clientId, publish];
    return Number(await this.#runner.run(passWake, 'acquire', target.name, args)) === 1;
  }
  /** The last local waiter gave up: this client no longer waits for the lock. */
  async leaveWaiterSet(target: WaitTarget, clientId: string): Promise<void> {
    await this.#runner.command(['zrem', target.waiters, clientId], target.waiters, 'acquire', target.name);
  }
  /** How many replicas confirmed the writes made so far on the node holding `lockKey` (WAIT). */
  async waitForReplicas(lockKey: string, lockName: string, ack: ReplicaAck, kind: ObjectKind = 'lock'): Promise<number> {
    try {
      return await this.#runner.port.waitForReplicas(lockKey, ack);
    } catch (error) {
      throw toLockError(error, 'acquire', lockName, kind);
    }
  }
}
