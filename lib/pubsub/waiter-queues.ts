import type { WaitTarget } from '../keys.js';
import type { LockScripts, PublishCommand } from '../scripts/registry.js';
import type { NoticeSubscriber } from './subscriber.js';
import { WaiterQueue } from './waiter-queue.js';

export interface WaiterQueuesConfig {
  readonly clientId: string;
  readonly subscriber: NoticeSubscriber;
  readonly scripts: LockScripts;
  /** The publish command, known once the topology is. */
  readonly publish: () => PublishCommand;
  /** ioredis' own `keyPrefix`: it prefixes KEYS (so our channel names in Lua) but not SUBSCRIBE. */
  readonly connectionKeyPrefix: string;
  readonly lingerMs: number;
  readonly onError: (error: unknown) => void;
}

/**
 * One {@link WaiterQueue} per lock this client waits on (per side, for a read-write lock), each
 * with its own wake-up channel.
 */
export class WaiterQueues {
  readonly #config: WaiterQueuesConfig;
  readonly #queues = new Map<string, WaiterQueue>();

  constructor(config: WaiterQueuesConfig) {
    this.#config = config;
  }

  /** The number of locks this client has a wake-up subscription for. */
  get size(): number {
    return this.#queues.size;
  }

  /** The queue of a lock this client already waits on (or recently did), if any. */
  peek(target: WaitTarget): WaiterQueue | undefined {
    return this.#queues.get(this.#channel(target));
  }

  /** The queue of a lock, created on first need. */
  get(target: WaitTarget): WaiterQueue {
    const { clientId, subscriber, scripts, publish, lingerMs, onError } = this.#config;
    const channel = this.#channel(target);
    const existing = this.#queues.get(channel);
    if (existing) return existing;
    const queue: WaiterQueue = new WaiterQueue(
      {
        subscribe: () =>
          subscriber.subscribe(channel, { notify: () => queue.notify(), resync: () => queue.resync() }),
        unsubscribe: () => void subscriber.unsubscribe(channel).catch(onError),
        passWake: () => void scripts.passWake(target, clientId, publish()).catch(onError),
        leaveWaiterSet: () => void scripts.leaveWaiterSet(target, clientId).catch(onError),
        dropped: () => {
          if (this.#queues.get(channel) === queue) this.#queues.delete(channel);
        },
      },
      lingerMs,
      target.wakeAll,
    );
    this.#queues.set(channel, queue);
    return queue;
  }

  #channel(target: WaitTarget): string {
    return this.#config.connectionKeyPrefix + target.wakePrefix + this.#config.clientId;
  }

  close(error: Error): void {
    for (const queue of this.#queues.values()) queue.close(error);
    this.#queues.clear();
  }
}
