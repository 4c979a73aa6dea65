import calculateSlot from 'cluster-key-slot';
import type { RedisPort } from './port.js';

/**
 * What scripts may publish a notice with, a fact of the deployment: `publish` one server
 * (standalone, Sentinel: classic pub/sub, whose receiver count is exact), `spublish` a Cluster
 * with sharded pub/sub (Redis 7), `publish-cluster` a Cluster without it. A notice for a waiting
 * client goes the way that client listens, as its listener id says (keys.ts, notice.lua): by
 * SPUBLISH where the Cluster has it and the client keeps sharded subscriptions, else by PUBLISH,
 * whose count on a Cluster covers one node only and so cannot prove a client gone.
 */
export type PublishCommand = 'publish' | 'spublish' | 'publish-cluster';

/** How wake-up notices travel: sharded (SSUBSCRIBE/SPUBLISH, Redis 7) or classic pub/sub. */
export type PubSubMode = 'sharded' | 'classic';

/** What rlock needs to know about the deployment behind a connection. */
export interface Topology {
  readonly cluster: boolean;
  readonly pubsub: PubSubMode;
  /** What the scripts may publish with on this deployment (see notice.lua); the same for every client on it. */
  readonly publish: PublishCommand;
  /** Whether one renewal script may cover keys of several slots on one node (Redis 7 flag). */
  readonly crossSlotScripts: boolean;
  /** Locks whose keys share a group are renewed in one call: one node (or one slot). */
  renewalGroup(lockKey: string): string;
}

export const STANDALONE: Topology = {
  cluster: false,
  pubsub: 'classic',
  publish: 'publish',
  crossSlotScripts: false,
  renewalGroup: () => '',
};

async function serverMajorVersion(redis: RedisPort): Promise<number> {
  const info = String(await redis.command(['info', 'server']));
  const match = /^redis_version:(\d+)/m.exec(info);
  return match ? Number(match[1]) : 0;
}

/**
 * Looks at a Cluster once: on Redis ≥ 7 this client listens by sharded pub/sub (a notice reaches
 * one shard, not the whole cluster) and renewals are batched per node; older servers fall back to
 * classic pub/sub and renewals batched per slot, and so does a client that cannot keep sharded
 * subscriptions (iovalkey). `requested` forces a pub/sub mode.
 */
export async function detectClusterTopology(redis: RedisPort, requested: PubSubMode | 'auto'): Promise<Topology> {
  const modern = (await serverMajorVersion(redis)) >= 7;
  const pubsub: PubSubMode = requested === 'auto' ? (modern && redis.shardedPubSub ? 'sharded' : 'classic') : requested;
  const slotOf = (lockKey: string): number => calculateSlot(redis.keyPrefix + lockKey);
  return {
    cluster: true,
    pubsub,
    // What the deployment offers, not how this client listens: each notice goes the way its
    // waiter listens (notice.lua), so clients of every family on one Cluster wake each other.
    publish: modern ? 'spublish' : 'publish-cluster',
    crossSlotScripts: modern,
    renewalGroup: modern
      ? (lockKey) => {
          const slot = slotOf(lockKey);
          return redis.slotOwner(slot) ?? `slot:${slot}`;
        }
      : (lockKey) => `slot:${slotOf(lockKey)}`,
  };
}
