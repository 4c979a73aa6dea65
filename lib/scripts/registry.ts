import type { Cluster, Redis } from 'ioredis';
import type { LockKeys } from '../keys.js';
import acquireLua from './acquire-2.lua';
import forceUnlockLua from './force-unlock-3.lua';
import passWakeLua from './pass-wake-3.lua';
import releaseLua from './release-3.lua';
import renewManyLua from './renew-many.lua';
import wakeOneLua from './wake-one.lua';

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
} as const;
export type WaiterMode = (typeof WaiterMode)[keyof typeof WaiterMode];

// Command names are versioned: two rlock versions sharing a connection must not swap scripts.
const COMMANDS = {
  acquire: { name: 'rlockAcquireV1', numberOfKeys: 2, lua: acquireLua },
  release: { name: 'rlockReleaseV1', numberOfKeys: 3, lua: wakeOneLua + releaseLua },
  renewMany: { name: 'rlockRenewManyV1', numberOfKeys: undefined, lua: renewManyLua },
  // Redis 7 only: one call renews locks of many slots that live on one Cluster node.
  renewManyCrossSlot: {
    name: 'rlockRenewManyCrossSlotV1',
    numberOfKeys: undefined,
    lua: `#!lua flags=allow-cross-slot-keys\n${renewManyLua}`,
  },
  forceUnlock: { name: 'rlockForceUnlockV1', numberOfKeys: 3, lua: wakeOneLua + forceUnlockLua },
  passWake: { name: 'rlockPassWakeV1', numberOfKeys: 3, lua: wakeOneLua + passWakeLua },
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

  /**
   * Per lock: 1 renewed, 0 gone, 2 held by others. On a Cluster all keys must share one slot,
   * or (`crossSlot`, Redis 7) one node. With `ack`, WAIT follows in the same round trip and
   * `acks` tells how many replicas confirmed.
   */
  async renewMany(
    lockKeys: readonly string[],
    owners: readonly string[],
    ttlMs: number,
    crossSlot = false,
    ack?: ReplicaAck,
  ): Promise<{ results: number[]; acks: number | undefined }> {
    const command = crossSlot ? COMMANDS.renewManyCrossSlot : COMMANDS.renewMany;
    // Redis checks that declared keys share a slot even with the cross-slot flag (the flag
    // covers keys touched from Lua): a node batch declares only its first key, for routing.
    const declared = crossSlot ? lockKeys.slice(0, 1) : lockKeys;
    const args = [declared.length, ...declared, ttlMs, lockKeys.length, ...lockKeys, ...owners];
    if (!ack) {
      const reply = await this.#call(command.name)(...args);
      return { results: (reply as unknown[]).map(Number), acks: undefined };
    }
    const pipeline = this.#redis.pipeline();
    (pipeline as unknown as Record<string, (...a: (string | number)[]) => unknown>)[command.name]!(...args);
    pipeline.wait(ack.replicas, ack.timeoutMs);
    const replies = await pipeline.exec();
    return { results: (replyOf(replies, 0) as unknown[]).map(Number), acks: Number(replyOf(replies, 1)) };
  }

  /** How many replicas confirmed the writes made so far on the node holding `lockKey` (WAIT). */
  async waitForReplicas(lockKey: string, ack: ReplicaAck): Promise<number> {
    // EXISTS pins the pipeline to the lock's node on a Cluster; WAIT itself has no key.
    const replies = await this.#redis.pipeline().exists(lockKey).wait(ack.replicas, ack.timeoutMs).exec();
    return replyOf(replies, 1) as number;
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
}
