import type { LockKeys } from '../keys.js';
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

/** One {@link WaiterQueue} per lock this client waits on, each with its own wake-up channel. */
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
  peek(keys: LockKeys): WaiterQueue | undefined {
    return this.#queues.get(this.#channel(keys));
  }

  /** The queue of a lock, created on first need. */
  get(keys: LockKeys): WaiterQueue {
    const { clientId, subscriber, scripts, publish, lingerMs, onError } = this.#config;
    const channel = this.#channel(keys);
    const existing = this.#queues.get(channel);
    if (existing) return existing;
    const queue: WaiterQueue = new WaiterQueue(
      {
        subscribe: () =>
          subscriber.subscribe(channel, { notify: () => queue.notify(), resync: () => queue.resync() }),
        unsubscribe: () => void subscriber.unsubscribe(channel).catch(onError),
        passWake: () => void scripts.passWake(keys, clientId, publish()).catch(onError),
        leaveWaiterSet: () => void scripts.leaveWaiterSet(keys, clientId).catch(onError),
        dropped: () => {
          if (this.#queues.get(channel) === queue) this.#queues.delete(channel);
        },
      },
      lingerMs,
    );
    this.#queues.set(channel, queue);
    return queue;
  }

  #channel(keys: LockKeys): string {
    return this.#config.connectionKeyPrefix + keys.wakePrefix + this.#config.clientId;
  }

  close(error: Error): void {
    for (const queue of this.#queues.values()) queue.close(error);
    this.#queues.clear();
  }
}
