import type { Cluster, Redis } from 'ioredis';
import type { LockKeys } from '../keys.js';
import acquireLua from './acquire-2.lua';
import fairAcquireLua from './fair-acquire-3.lua';
import fairForceUnlockLua from './fair-force-unlock-4.lua';
import fairLeaveLua from './fair-leave-4.lua';
import fairQueueLua from './fair-queue.lua';
import fairReleaseLua from './fair-release-4.lua';
import forceUnlockLua from './force-unlock-3.lua';
import passWakeLua from './pass-wake-3.lua';
import releaseLua from './release-3.lua';
import releaseHoldLua from './release-hold.lua';
import renewManyLua from './renew-many.lua';
import wakeOneLua from './wake-one.lua';

/** A connection rlock sends commands on: a standalone ioredis client or a Cluster. */
export type RedisConnection = Redis | Cluster;

/** `PUBLISH`, or `SPUBLISH` (sharded, one shard only) on a Redis 7 Cluster. */
export type PublishCommand = 'publish' | 'spublish';

/** What a waiting attempt tells the acquire script about this client's other waiters. */
export const WaiterMode = {
  /** A single attempt: no waiter bookkeeping. */
  Single: '0',
  /** Waiting, and other local waiters of this client wait too: stay registered. */
  Shared: '1',
  /** Waiting, and the only local waiter: leave the waiter set on success. */
  Alone: '2',
} as const;
export type WaiterMode = (typeof WaiterMode)[keyof typeof WaiterMode];

// Command names are versioned: two rlock versions sharing a connection must not swap scripts.
const COMMANDS = {
  acquire: { name: 'rlockAcquireV1', numberOfKeys: 2, lua: acquireLua },
  release: { name: 'rlockReleaseV1', numberOfKeys: 3, lua: wakeOneLua + releaseHoldLua + releaseLua },
  renewMany: { name: 'rlockRenewManyV1', numberOfKeys: undefined, lua: renewManyLua },
  forceUnlock: { name: 'rlockForceUnlockV1', numberOfKeys: 3, lua: wakeOneLua + forceUnlockLua },
  passWake: { name: 'rlockPassWakeV1', numberOfKeys: 3, lua: wakeOneLua + passWakeLua },
  fairAcquire: { name: 'rlockFairAcquireV1', numberOfKeys: 3, lua: fairQueueLua + fairAcquireLua },
  fairRelease: { name: 'rlockFairReleaseV1', numberOfKeys: 4, lua: fairQueueLua + releaseHoldLua + fairReleaseLua },
  fairLeave: { name: 'rlockFairLeaveV1', numberOfKeys: 4, lua: fairQueueLua + fairLeaveLua },
  fairForceUnlock: { name: 'rlockFairForceUnlockV1', numberOfKeys: 4, lua: fairQueueLua + fairForceUnlockLua },
} as const;

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/**
 * The scripts, defined once per connection with ioredis `defineCommand`, which sends EVALSHA
 * and falls back to EVAL on NOSCRIPT (after a restart or failover) by itself.
 */
export class LockScripts {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
    for (const { name, numberOfKeys, lua } of Object.values(COMMANDS)) {
      if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') {
        redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
      }
    }
  }

  #call(name: string): ScriptCall {
    const fn = (this.#redis as unknown as Record<string, ScriptCall>)[name];
    if (!fn) throw new Error(`rlock script ${name} is not defined on this connection`);
    return fn.bind(this.#redis);
  }

  /** nil (null) when acquired or re-entered, else the holder's PTTL (ms, -1 = no TTL). */
  async acquire(keys: LockKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode): Promise<number | null> {
    const reply = await this.#call(COMMANDS.acquire.name)(keys.lock, keys.waiters, owner, leaseMs, clientId, mode);
    return reply === null ? null : Number(reply);
  }

  /** The owner's remaining hold count, or ScriptStatus.NotHeld. `requestId` makes a resent call harmless. */
  async release(
    keys: LockKeys,
    owner: string,
    reExpireMs: number,
    requestId: string,
    publish: PublishCommand,
  ): Promise<number> {
    const reply = await this.#call(COMMANDS.release.name)(
      keys.lock,
      keys.waiters,
      keys.wakePrefix,
      owner,
      reExpireMs,
      requestId,
      publish,
    );
    return Number(reply);
  }

  /** Per lock: 1 renewed, 0 gone, 2 held by others. All keys must share one slot on a Cluster. */
  async renewMany(lockKeys: readonly string[], owners: readonly string[], ttlMs: number): Promise<number[]> {
    const reply = await this.#call(COMMANDS.renewMany.name)(lockKeys.length, ...lockKeys, ttlMs, ...owners);
    return (reply as unknown[]).map(Number);
  }

  /** The last local waiter gave up: this client no longer waits for the lock. */
  async leaveWaiterSet(keys: LockKeys, clientId: string): Promise<void> {
    await this.#redis.zrem(keys.waiters, clientId);
  }

  async forceUnlock(keys: LockKeys, publish: PublishCommand): Promise<boolean> {
    const reply = await this.#call(COMMANDS.forceUnlock.name)(keys.lock, keys.waiters, keys.wakePrefix, publish);
    return Number(reply) === 1;
  }

  async passWake(keys: LockKeys, clientId: string, publish: PublishCommand): Promise<boolean> {
    const reply = await this.#call(COMMANDS.passWake.name)(keys.lock, keys.waiters, keys.wakePrefix, clientId, publish);
    return Number(reply) === 1;
  }

  /**
   * Fair lock: acquires (null), or queues / checks in `waiterId` ('' for a single attempt that
   * never queues) and resolves with the latest time to ask again, ms.
   */
  async fairAcquire(
    keys: LockKeys,
    owner: string,
    leaseMs: number,
    waiterId: string,
    waitTimeoutMs: number,
  ): Promise<number | null> {
    const reply = await this.#call(COMMANDS.fairAcquire.name)(
      keys.lock,
      keys.queue,
      keys.queueTimeouts,
      owner,
      leaseMs,
      waiterId,
      waitTimeoutMs,
    );
    return reply === null ? null : Number(reply);
  }

  /** Fair lock: like {@link release}; when the lock is freed, the head of the queue is told it is its turn. */
  async fairRelease(
    keys: LockKeys,
    owner: string,
    reExpireMs: number,
    requestId: string,
    publish: PublishCommand,
  ): Promise<number> {
    const reply = await this.#call(COMMANDS.fairRelease.name)(
      ...fairKeys(keys),
      owner,
      reExpireMs,
      requestId,
      publish,
    );
    return Number(reply);
  }

  /** Fair lock: a waiting call gave up; true if it was still queued. */
  async fairLeave(keys: LockKeys, waiterId: string, publish: PublishCommand): Promise<boolean> {
    const reply = await this.#call(COMMANDS.fairLeave.name)(...fairKeys(keys), waiterId, publish);
    return Number(reply) === 1;
  }

  /** Fair lock: deletes the lock whoever holds it, then tells the head; true if there was a lock. */
  async fairForceUnlock(keys: LockKeys, publish: PublishCommand): Promise<boolean> {
    const reply = await this.#call(COMMANDS.fairForceUnlock.name)(...fairKeys(keys), publish);
    return Number(reply) === 1;
  }
}

/** The four keys of the fair scripts that may hand the lock on. */
function fairKeys(keys: LockKeys): string[] {
  return [keys.lock, keys.queue, keys.queueTimeouts, keys.turnPrefix];
}
