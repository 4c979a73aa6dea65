import { listenerId, type LockKeys, type WaitTarget } from '../keys.js';
import type { Topology } from '../redis/topology.js';
import { settleWithin } from '../settle-within.js';
import type { LockScripts } from '../scripts/registry.js';
import { FairWaiterQueue } from './fair-waiter-queue.js';
import type { NoticeSubscriber } from './notice-subscriber.js';
import type { WakeChannel, WakeChannelHooks } from './wake-channel.js';
import { WaiterQueue } from './waiter-queue.js';

export interface WaiterQueuesConfig {
  readonly clientId: string;
  readonly subscriber: NoticeSubscriber;
  readonly scripts: LockScripts;
  /** The deployment, known once `ready()` resolved: what scripts publish with, how this client listens. */
  readonly topology: () => Topology;
  /** ioredis' own `keyPrefix`: it prefixes KEYS (so our channel names in Lua) but not SUBSCRIBE. */
  readonly connectionKeyPrefix: string;
  readonly lingerMs: number;
  readonly onError: (error: unknown) => void;
  /** Called at every wait (the client's process identity is written at its first). */
  readonly waiting?: () => void;
}

/** How long close() waits for the calls its queues sent on their way out, ms. */
const CLOSE_LEAVE_MS = 1_000;

/**
 * This client's wake-up channels, one per lock it waits on: a {@link WaiterQueue} per non-fair
 * lock (per side, for a read-write lock), a {@link FairWaiterQueue} per fair lock (on a channel
 * of its own).
 */
export class WaiterQueues {
  readonly #config: WaiterQueuesConfig;
  readonly #queues = new Map<string, WaiterQueue>();
  readonly #fairQueues = new Map<string, FairWaiterQueue>();
  /** Channels of other kinds (semaphores, latches), made by their own modules. */
  readonly #otherQueues = new Map<string, WakeChannel>();
  #closedWith: Error | undefined;
  /** Leave and hand-on calls still out (see leaving()). */
  readonly #leaving = new Set<Promise<void>>();
  #listenerId: string | undefined;

  constructor(config: WaiterQueuesConfig) {
    this.#config = config;
  }

  /**
   * The id this client waits under in Redis and names its channels by (keys.ts): known once the
   * topology is, which never changes after.
   */
  get listenerId(): string {
    const { cluster, pubsub } = this.#config.topology();
    this.#listenerId ??= listenerId(this.#config.clientId, cluster && pubsub === 'classic');
    return this.#listenerId;
  }

  /** The queue of a lock this client already waits on (or recently did), if any. */
  peek(target: WaitTarget): WaiterQueue | undefined {
    // Asked before every attempt: with no queue at all (nothing waited lately), no channel name is built.
    return this.#queues.size === 0 ? undefined : this.#queues.get(this.#channel(target.wakePrefix));
  }

  /** The queue of a lock, created on first need. */
  get(target: WaitTarget): WaiterQueue {
    const { scripts, topology } = this.#config;
    const id = this.listenerId;
    return this.#getOrCreate(
      this.#queues,
      target.wakePrefix,
      (hooks) =>
        new WaiterQueue(
          {
            ...hooks,
            passWake: () => this.leaving(scripts.lock.passWake(target, id, topology().publish)),
            leaveWaiterSet: () => this.leaving(scripts.lock.leaveWaiterSet(target, id)),
          },
          this.#config.lingerMs,
          target.wakeAll,
        ),
    );
  }

  /** The fair queue of a lock this client already waits on (or recently did), if any. */
  peekFair(keys: LockKeys): FairWaiterQueue | undefined {
    return this.#fairQueues.size === 0 ? undefined : this.#fairQueues.get(this.#channel(keys.turnPrefix));
  }

  /** The fair queue of a lock, created on first need. */
  getFair(keys: LockKeys): FairWaiterQueue {
    return this.#getOrCreate(this.#fairQueues, keys.turnPrefix, (hooks) => new FairWaiterQueue(hooks, this.#config.lingerMs));
  }

  /** This client's channel with `prefix` (see {@link channel}), if it exists. */
  peekChannel<Q extends WakeChannel>(prefix: string): Q | undefined {
    return this.#otherQueues.get(this.#channel(prefix)) as Q | undefined;
  }

  /**
   * This client's wake-up channel `prefix` + listener id, made by `create` on first need: for
   * waiters other than locks'. It is subscribed, lingers and is closed like the others. A prefix
   * is always used with the same kind of channel.
   */
  channel<Q extends WakeChannel>(prefix: string, create: (hooks: WakeChannelHooks) => Q): Q {
    return this.#getOrCreate(this.#otherQueues as Map<string, Q>, prefix, create);
  }

  /** Sends a call that leaves a waiter set or hands a wake-up on; close() waits for those in flight. */
  leaving(call: Promise<unknown>): void {
    const settled = call.then(() => undefined, this.#config.onError);
    this.#leaving.add(settled);
    void settled.finally(() => this.#leaving.delete(settled));
  }

  /**
   * Fails every waiter; resolves once what the queues sent on their way out (leaving waiter sets,
   * handing promised permits back) was answered, at most CLOSE_LEAVE_MS: a connection closed
   * right after close() then drops none of them, and no dead client stays registered.
   */
  close(error: Error): Promise<void> {
    this.#closedWith = error;
    for (const queues of [this.#queues, this.#fairQueues, this.#otherQueues]) {
      for (const queue of queues.values()) queue.close(error);
      queues.clear();
    }
    return settleWithin(Promise.all(this.#leaving), CLOSE_LEAVE_MS).then(() => undefined);
  }

  #channel(prefix: string): string {
    return this.#config.connectionKeyPrefix + prefix + this.listenerId;
  }

  #getOrCreate<Q extends WakeChannel>(queues: Map<string, Q>, prefix: string, create: (hooks: WakeChannelHooks) => Q): Q {
    const { subscriber, onError, waiting } = this.#config;
    waiting?.();
    const channel = this.#channel(prefix);
    const existing = queues.get(channel);
    if (existing) return existing;
    const queue: Q = create({
      // A call that was in flight at close() may ask for its channel after it: it fails as closed
      // (the queue stays open, so its waiter still leaves the waiter set it may have joined).
      subscribe: () => (this.#closedWith ? Promise.reject(this.#closedWith) : subscriber.subscribe(channel, queue)),
      unsubscribe: () => void subscriber.unsubscribe(channel).catch(onError),
      dropped: () => {
        if (queues.get(channel) === queue) queues.delete(channel);
      },
    });
    queues.set(channel, queue);
    return queue;
  }
}
