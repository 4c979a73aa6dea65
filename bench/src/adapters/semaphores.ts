import type { Redis } from 'ioredis';
import { Semaphore as RedisSemaphore } from 'redis-semaphore';
import { installedVersion, TUNED_RETRY_DELAY_MS } from './adapter.js';
import type { Connections } from '../connections.js';
import { openLockClient, rlockVersion } from './rlock.js';

/** Gives a permit back. */
export type PermitRelease = () => Promise<void>;

/** One worker's view of a semaphore library: acquire one permit (waiting), then release it. */
export interface PermitTaker {
  /** Where this worker's commands go: the EVALSHA floor is measured here. */
  readonly connection: Redis;
  /** One permit of `name` (limit `permits`) for `leaseMs`; null when the library gave up. */
  acquire(name: string, permits: number, leaseMs: number, waitMs: number): Promise<PermitRelease | null>;
  close(): Promise<void>;
}

/** A semaphore library in one configuration; `lockAdapter` is the `--libraries` id that selects it. */
export interface SemaphoreAdapter {
  readonly id: string;
  readonly lockAdapter: string;
  readonly label: string;
  readonly waiting: string;
  open(connections: Connections): Promise<PermitTaker>;
}

function rlockSemaphore(fair: boolean): SemaphoreAdapter {
  return {
    id: fair ? 'rlock-fair' : 'rlock',
    lockAdapter: fair ? 'rlock-fair' : 'rlock',
    label: `rlock ${rlockVersion} (${fair ? 'fair Semaphore' : 'Semaphore'})`,
    waiting: fair ? 'queues in arrival order; a release tells the head' : 'no polling: a release notifies the clients its permits fit',
    async open(connections) {
      const { redis, client } = await openLockClient(connections);
      return {
        connection: redis,
        async acquire(name, permits, leaseMs, waitMs) {
          const permit = await client.getSemaphore(name, { permits, fair }).tryAcquire({ waitTime: waitMs, leaseTime: leaseMs });
          return permit ? () => permit.release() : null;
        },
        close: () => client.close(),
      };
    },
  };
}

function redisSemaphore(tuned: boolean): SemaphoreAdapter {
  const id = tuned ? 'redis-semaphore-tuned' : 'redis-semaphore-defaults';
  return {
    id,
    lockAdapter: id,
    label: `redis-semaphore ${installedVersion('redis-semaphore')} (Semaphore, ${tuned ? 'tuned' : 'defaults'})`,
    waiting: tuned
      ? `polls every ${TUNED_RETRY_DELAY_MS} ms for the whole wait`
      : 'polls every 10 ms for up to 10 s (acquireTimeout)',
    async open(connections) {
      const redis = await connections.open();
      return {
        connection: redis,
        async acquire(name, permits, leaseMs, waitMs) {
          const options = tuned
            ? { lockTimeout: leaseMs, acquireTimeout: waitMs, retryInterval: TUNED_RETRY_DELAY_MS }
            : { lockTimeout: leaseMs };
          const semaphore = new RedisSemaphore(redis, name, permits, options);
          return (await semaphore.tryAcquire()) ? () => semaphore.release() : null;
        },
        close: () => Promise.resolve(),
      };
    },
  };
}

/** Every semaphore configuration, rlock's first. */
export const SEMAPHORE_ADAPTERS: readonly SemaphoreAdapter[] = [
  rlockSemaphore(false),
  rlockSemaphore(true),
  redisSemaphore(false),
  redisSemaphore(true),
];
