import type { Cluster, Redis } from 'ioredis';
import { toLockError, type LockOperation } from '../errors.js';
import type { FencedLockKeys, LockKeys, ReadWriteKeys, WaitTarget } from '../keys.js';
import acquireLua from './acquire-2.lua';
import callLogLua from './call-log.lua';
import enterHoldLua from './enter-hold.lua';
import fairAcquireLua from './fair-acquire-3.lua';
import fairForceUnlockLua from './fair-force-unlock-5.lua';
import fairLeaveLua from './fair-leave-4.lua';
import fairQueueLua from './fair-queue.lua';
import fairReleaseLua from './fair-release-5.lua';
import fencedAcquireLua from './fenced-acquire-3.lua';
import forcedOnceLua from './forced-once.lua';
import forceUnlockLua from './force-unlock-4.lua';
import passWakeLua from './pass-wake-4.lua';
import readAcquireLua from './read-acquire-3.lua';
import readReleaseLua from './read-release-5.lua';
import readWriteForceUnlockLua from './read-write-force-unlock-7.lua';
import readWriteHoldsLua from './read-write-holds.lua';
import readWriteStateLua from './read-write-state-2.lua';
import releaseLua from './release-4.lua';
import releaseHoldLua from './release-hold.lua';
import renewManyLua from './renew-many.lua';
import renewPermitsManyLua from './renew-permits-many.lua';
import renewReadWriteManyLua from './renew-read-write-many.lua';
import serverTimeLua from './server-time.lua';
import wakeAllLua from './wake-all.lua';
import wakeOneLua from './wake-one.lua';
import waiterSetLua from './waiter-set.lua';
import writeAcquireLua from './write-acquire-3.lua';
import writeReleaseLua from './write-release-7.lua';

/** A connection rlock sends commands on: a standalone ioredis client or a Cluster. */
export type RedisConnection = Redis | Cluster;

/**
 * How scripts publish a wake-up notice: `publish` (standalone, Sentinel), `spublish` (sharded,
 * one shard only, on a Redis 7 Cluster), or `publish-cluster` (classic PUBLISH on a Cluster,
 * whose receiver count covers one node only and so cannot prove a client gone).
 */
export type PublishCommand = 'publish' | 'spublish' | 'publish-cluster';

/** What a waiting attempt tells the acquire script about this client's other waiters. */
export const WaiterMode = {
  /** A single attempt: no waiter bookkeeping. */
  Single: '0',
  /** Waiting, and other local waiters of this client wait too: stay registered. */
  Shared: '1',
  /** Waiting, and the only local waiter: leave the waiter set on success. */
  Alone: '2',
  /** Shared, for the attempt a wake-up prompted: on failure, back to the front of the set. */
  SharedWoken: '3',
  /** Alone, for the attempt a wake-up prompted: on failure, back to the front of the set. */
  AloneWoken: '4',
} as const;
export type WaiterMode = (typeof WaiterMode)[keyof typeof WaiterMode];

/** Which batched watchdog script renews a hold: a reentrant lock's, a read-write lock's, or a semaphore permit's. */
export type RenewScript = 'lock' | 'readWrite' | 'permit';

/** What a read-write lock looks like to one owner (lib/scripts/read-write-state-2.lua). */
export interface ReadWriteState {
  /** ms left of the write lease; -2 when no writer holds. */
  readonly writeLeftMs: number;
  readonly ownWrites: number;
  /** How many owners hold read holds. */
  readonly readers: number;
  /** ms left of the longest read lease; -2 when no reader holds. */
  readonly readLeftMs: number;
  readonly ownReads: number;
}

const rwPrelude = serverTimeLua + readWriteHoldsLua;

// Redis 7 script flag: the script may touch keys of several slots (all on the node it runs on).
const CROSS_SLOT = '#!lua flags=allow-cross-slot-keys\n';

// Command names are versioned: two rlock versions sharing a connection must not swap scripts.
// Shared Lua functions are prepended to the scripts that call them.
const enter = serverTimeLua + waiterSetLua + callLogLua + enterHoldLua;
const COMMANDS = {
  acquire: { name: 'rlockAcquireV2', numberOfKeys: 2, lua: enter + acquireLua },
  release: { name: 'rlockReleaseV2', numberOfKeys: 4, lua: callLogLua + releaseHoldLua + wakeOneLua + releaseLua },
  renewMany: { name: 'rlockRenewManyV2', numberOfKeys: undefined, lua: renewManyLua },
  forceUnlock: { name: 'rlockForceUnlockV2', numberOfKeys: 4, lua: wakeOneLua + forcedOnceLua + forceUnlockLua },
  passWake: { name: 'rlockPassWakeV1', numberOfKeys: 4, lua: wakeOneLua + passWakeLua },
  fencedAcquire: { name: 'rlockFencedAcquireV2', numberOfKeys: 3, lua: enter + fencedAcquireLua },
  readAcquire: { name: 'rlockReadAcquireV2', numberOfKeys: 3, lua: rwPrelude + waiterSetLua + callLogLua + readAcquireLua },
  writeAcquire: { name: 'rlockWriteAcquireV2', numberOfKeys: 3, lua: rwPrelude + waiterSetLua + callLogLua + writeAcquireLua },
  readRelease: { name: 'rlockReadReleaseV2', numberOfKeys: 5, lua: rwPrelude + callLogLua + wakeOneLua + readReleaseLua },
  writeRelease: {
    name: 'rlockWriteReleaseV2',
    numberOfKeys: 7,
    lua: rwPrelude + callLogLua + wakeOneLua + wakeAllLua + writeReleaseLua,
  },
  readWriteForceUnlock: {
    name: 'rlockReadWriteForceUnlockV2',
    numberOfKeys: 7,
    lua: rwPrelude + wakeOneLua + wakeAllLua + forcedOnceLua + readWriteForceUnlockLua,
  },
  renewReadWriteMany: { name: 'rlockRenewReadWriteManyV1', numberOfKeys: undefined, lua: rwPrelude + renewReadWriteManyLua },
  // Redis 7 Cluster node batches: one call renews holds of many slots that live on one node.
  renewManyCrossSlot: { name: 'rlockRenewManyCrossSlotV2', numberOfKeys: undefined, lua: CROSS_SLOT + renewManyLua },
  renewReadWriteManyCrossSlot: {
    name: 'rlockRenewReadWriteManyCrossSlotV1',
    numberOfKeys: undefined,
    lua: CROSS_SLOT + rwPrelude + renewReadWriteManyLua,
  },
  renewPermitsMany: { name: 'rlockRenewPermitsManyV1', numberOfKeys: undefined, lua: serverTimeLua + renewPermitsManyLua },
  renewPermitsManyCrossSlot: {
    name: 'rlockRenewPermitsManyCrossSlotV1',
    numberOfKeys: undefined,
    lua: CROSS_SLOT + serverTimeLua + renewPermitsManyLua,
  },
  readWriteState: { name: 'rlockReadWriteStateV1', numberOfKeys: 2, lua: serverTimeLua + readWriteStateLua },
  fairAcquire: { name: 'rlockFairAcquireV2', numberOfKeys: 3, lua: serverTimeLua + fairQueueLua + callLogLua + enterHoldLua + fairAcquireLua },
  fairRelease: {
    name: 'rlockFairReleaseV2',
    numberOfKeys: 5,
    lua: serverTimeLua + fairQueueLua + callLogLua + releaseHoldLua + fairReleaseLua,
  },
  fairLeave: { name: 'rlockFairLeaveV1', numberOfKeys: 4, lua: serverTimeLua + fairQueueLua + fairLeaveLua },
  fairForceUnlock: {
    name: 'rlockFairForceUnlockV2',
    numberOfKeys: 5,
    lua: serverTimeLua + fairQueueLua + forcedOnceLua + fairForceUnlockLua,
  },
} as const;

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/** `syncReplicas`: how many replicas must confirm a write, and how long to wait for them. */
export interface ReplicaAck {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** The reply of command `index` of a pipeline, or its error thrown. */
function replyOf(replies: [Error | null, unknown][] | null, index: number): unknown {
  const entry = replies?.[index];
  if (!entry) throw new Error('rlock: the pipeline returned no reply');
  if (entry[0]) throw entry[0];
  return entry[1];
}

/**
 * The scripts, defined once per connection with ioredis `defineCommand`, which sends EVALSHA
 * and falls back to EVAL on NOSCRIPT (after a restart or failover) by itself. Every failure from
 * Redis or the connection comes out as a LockRedisError naming the lock and the operation.
 */
export class LockScripts {
  readonly #redis: RedisConnection;
  /** ioredis' own `keyPrefix`: it prefixes KEYS, so keys passed in ARGV get it here. */
  readonly #keyPrefix: string;

  constructor(redis: RedisConnection, connectionKeyPrefix: string) {
    this.#redis = redis;
    this.#keyPrefix = connectionKeyPrefix;
    for (const { name, numberOfKeys, lua } of Object.values(COMMANDS)) {
      if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') {
        redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
      }
    }
  }

  /** Runs a script; `lockName` and `operation` name what failed, if it fails. */
  async #run(name: string, operation: LockOperation, lockName: string | undefined, args: (string | number)[]): Promise<unknown> {
    const fn = (this.#redis as unknown as Record<string, ScriptCall>)[name];
    if (!fn) throw new Error(`rlock script ${name} is not defined on this connection`);
    try {
      return await fn.apply(this.#redis, args);
    } catch (error) {
      throw toLockError(error, operation, lockName);
    }
  }

  /** nil (null) when acquired or re-entered, else the holder's PTTL (ms, -1 = no TTL). */
  async acquire(keys: LockKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode, requestId: string): Promise<number | null> {
    const reply = await this.#run(COMMANDS.acquire.name, 'acquire', keys.name, [keys.lock, keys.waiters, owner, leaseMs, clientId, mode, requestId]);
    return reply === null ? null : Number(reply);
  }

  /** The fencing token when acquired or re-entered, else the holder's PTTL (ms, -1 = no TTL). */
  async fencedAcquire(
    keys: FencedLockKeys,
    owner: string,
    leaseMs: number,
    clientId: string,
    mode: WaiterMode,
    requestId: string,
  ): Promise<{ token: number } | { ttlMs: number }> {
    const args = [keys.lock, keys.waiters, keys.token, owner, leaseMs, clientId, mode, requestId];
    const reply = await this.#run(COMMANDS.fencedAcquire.name, 'acquire', keys.name, args);
    return Array.isArray(reply) ? { token: Number(reply[0]) } : { ttlMs: Number(reply) };
  }

  /**
   * The owner's remaining hold count, or ScriptStatus.NotHeld. `requestId` makes a resent call
   * harmless; a final release is remembered `recordMs` for that.
   */
  async release(keys: LockKeys, owner: string, reExpireMs: number, requestId: string, publish: PublishCommand, recordMs: number): Promise<number> {
    const args = [keys.lock, keys.waiters, keys.wakePrefix, keys.records, owner, reExpireMs, requestId, publish, recordMs];
    return Number(await this.#run(COMMANDS.release.name, 'release', keys.name, args));
  }

  /** nil (null) when acquired or re-entered, else ms until the writer's lease ends. */
  async readAcquire(keys: ReadWriteKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode, requestId: string): Promise<number | null> {
    const args = [keys.lock, keys.readers, keys.read.waiters, owner, leaseMs, clientId, mode, requestId];
    const reply = await this.#run(COMMANDS.readAcquire.name, 'acquire', keys.name, args);
    return reply === null ? null : Number(reply);
  }

  /** nil (null) when acquired or re-entered, ScriptStatus.UpgradeRefused, else the lock's PTTL (ms). */
  async writeAcquire(keys: ReadWriteKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode, requestId: string): Promise<number | null> {
    const args = [keys.lock, keys.readers, keys.write.waiters, owner, leaseMs, clientId, mode, requestId];
    const reply = await this.#run(COMMANDS.writeAcquire.name, 'acquire', keys.name, args);
    return reply === null ? null : Number(reply);
  }

  /** The owner's remaining read hold count, or ScriptStatus.NotHeld (see {@link release}). */
  async readRelease(keys: ReadWriteKeys, owner: string, reExpireMs: number, requestId: string, publish: PublishCommand, recordMs: number): Promise<number> {
    const { lock, readers, write, records } = keys;
    const args = [lock, readers, write.waiters, write.wakePrefix, records, owner, reExpireMs, requestId, publish, recordMs];
    return Number(await this.#run(COMMANDS.readRelease.name, 'release', keys.name, args));
  }

  /** The owner's remaining write hold count, or ScriptStatus.NotHeld (see {@link release}). */
  async writeRelease(keys: ReadWriteKeys, owner: string, reExpireMs: number, requestId: string, publish: PublishCommand, recordMs: number): Promise<number> {
    const args = [...readWriteKeyList(keys), owner, reExpireMs, requestId, publish, recordMs];
    return Number(await this.#run(COMMANDS.writeRelease.name, 'release', keys.name, args));
  }

  /** Deletes the lock if held in `mode`; true if it was. Once per `requestId`. */
  async readWriteForceUnlock(keys: ReadWriteKeys, mode: 'read' | 'write', publish: PublishCommand, requestId: string): Promise<boolean> {
    const args = [...readWriteKeyList(keys), mode, publish, requestId];
    return Number(await this.#run(COMMANDS.readWriteForceUnlock.name, 'forceUnlock', keys.name, args)) === 1;
  }

  async readWriteState(keys: ReadWriteKeys, owner: string): Promise<ReadWriteState> {
    const reply = (await this.#run(COMMANDS.readWriteState.name, 'query', keys.name, [keys.lock, keys.readers, owner])) as unknown[];
    const [writeLeftMs, ownWrites, readers, readLeftMs, ownReads] = reply.map(Number) as [number, number, number, number, number];
    return { writeLeftMs, ownWrites, readers, readLeftMs, ownReads };
  }

  /**
   * Renews watchdog holds in one call; per hold: 1 renewed, 0 gone, 2 held by others. `keys`
   * holds each hold's keys in turn (script 'lock': the hash; 'readWrite': the hash and its
   * readers set), `holders` who holds as the script knows it. On a Cluster all keys must share
   * one slot, or (`crossSlot`, Redis 7) one node. With `ack`, WAIT follows in the same round
   * trip and `acks` tells how many replicas confirmed.
   */
  async renewMany(
    script: RenewScript,
    keys: readonly string[],
    holders: readonly string[],
    ttlMs: number,
    crossSlot = false,
    ack?: ReplicaAck,
  ): Promise<{ results: number[]; acks: number | undefined }> {
    const command =
      script === 'lock'
        ? crossSlot ? COMMANDS.renewManyCrossSlot : COMMANDS.renewMany
        : script === 'permit'
          ? crossSlot ? COMMANDS.renewPermitsManyCrossSlot : COMMANDS.renewPermitsMany
          : crossSlot ? COMMANDS.renewReadWriteManyCrossSlot : COMMANDS.renewReadWriteMany;
    // Redis checks that declared keys share a slot even with the cross-slot flag (the flag
    // covers keys touched from Lua): a node batch declares only its first key, for routing.
    // The scripts read every key from ARGV either way, where ioredis adds no keyPrefix.
    const declared = crossSlot ? keys.slice(0, 1) : keys;
    const prefixed = this.#keyPrefix ? keys.map((key) => this.#keyPrefix + key) : keys;
    const args = [declared.length, ...declared, ttlMs, holders.length, ...prefixed, ...holders];
    try {
      if (!ack) {
        const reply = await this.#run(command.name, 'renew', undefined, args);
        return { results: (reply as unknown[]).map(Number), acks: undefined };
      }
      const pipeline = this.#redis.pipeline();
      (pipeline as unknown as Record<string, (...a: (string | number)[]) => unknown>)[command.name]!(...args);
      pipeline.wait(ack.replicas, ack.timeoutMs);
      const replies = await pipeline.exec();
      return { results: (replyOf(replies, 0) as unknown[]).map(Number), acks: Number(replyOf(replies, 1)) };
    } catch (error) {
      throw toLockError(error, 'renew', undefined);
    }
  }

  /** How many replicas confirmed the writes made so far on the node holding `lockKey` (WAIT). */
  async waitForReplicas(lockKey: string, lockName: string, ack: ReplicaAck): Promise<number> {
    try {
      // EXISTS pins the pipeline to the lock's node on a Cluster; WAIT itself has no key.
      const replies = await this.#redis.pipeline().exists(lockKey).wait(ack.replicas, ack.timeoutMs).exec();
      return replyOf(replies, 1) as number;
    } catch (error) {
      throw toLockError(error, 'acquire', lockName);
    }
  }

  /** The last local waiter gave up: this client no longer waits for the lock. */
  async leaveWaiterSet(target: WaitTarget, clientId: string): Promise<void> {
    try {
      await this.#redis.zrem(target.waiters, clientId);
    } catch (error) {
      throw toLockError(error, 'acquire', target.name);
    }
  }

  /** Deletes the lock whoever holds it; true if there was one. Once per `requestId`. */
  async forceUnlock(keys: LockKeys, publish: PublishCommand, requestId: string): Promise<boolean> {
    const args = [keys.lock, keys.waiters, keys.wakePrefix, keys.records, publish, requestId];
    return Number(await this.#run(COMMANDS.forceUnlock.name, 'forceUnlock', keys.name, args)) === 1;
  }

  /** Leaves the waiter set and, if the lock is free, wakes the next client in line. */
  async passWake(target: WaitTarget, clientId: string, publish: PublishCommand): Promise<boolean> {
    const { lock, waiters, handOnWaiters, handOnWakePrefix } = target;
    const args = [lock, waiters, handOnWaiters, handOnWakePrefix, clientId, publish];
    return Number(await this.#run(COMMANDS.passWake.name, 'acquire', target.name, args)) === 1;
  }

  /**
   * Fair lock: acquires (null), or queues / checks in `waiterId` ('' for a single attempt that
   * never queues) and resolves with the latest time to ask again, ms.
   */
  async fairAcquire(keys: LockKeys, owner: string, leaseMs: number, waiterId: string, waitTimeoutMs: number, requestId: string): Promise<number | null> {
    const args = [keys.lock, keys.queue, keys.queueTimeouts, owner, leaseMs, waiterId, waitTimeoutMs, requestId];
    const reply = await this.#run(COMMANDS.fairAcquire.name, 'acquire', keys.name, args);
    return reply === null ? null : Number(reply);
  }

  /** Fair lock: like {@link release}; when the lock is freed, the head of the queue is told it is its turn. */
  async fairRelease(keys: LockKeys, owner: string, reExpireMs: number, requestId: string, publish: PublishCommand, recordMs: number): Promise<number> {
    const args = [...fairKeys(keys), keys.records, owner, reExpireMs, requestId, publish, recordMs];
    return Number(await this.#run(COMMANDS.fairRelease.name, 'release', keys.name, args));
  }

  /** Fair lock: a waiting call gave up; true if it was still queued. */
  async fairLeave(keys: LockKeys, waiterId: string, publish: PublishCommand): Promise<boolean> {
    return Number(await this.#run(COMMANDS.fairLeave.name, 'acquire', keys.name, [...fairKeys(keys), waiterId, publish])) === 1;
  }

  /** Fair lock: deletes the lock whoever holds it, then tells the head; true if there was a lock. */
  async fairForceUnlock(keys: LockKeys, publish: PublishCommand, requestId: string): Promise<boolean> {
    const args = [...fairKeys(keys), keys.records, publish, requestId];
    return Number(await this.#run(COMMANDS.fairForceUnlock.name, 'forceUnlock', keys.name, args)) === 1;
  }
}

/** The four keys of the fair scripts that may hand the lock on. */
function fairKeys(keys: LockKeys): string[] {
  return [keys.lock, keys.queue, keys.queueTimeouts, keys.turnPrefix];
}

/** KEYS of the read-write scripts that may wake both readers and writers, then the record prefix. */
function readWriteKeyList(keys: ReadWriteKeys): string[] {
  const { lock, readers, read, write, records } = keys;
  return [lock, readers, read.waiters, read.wakePrefix, write.waiters, write.wakePrefix, records];
}
