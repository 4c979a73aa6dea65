import { Mutex } from 'redis-semaphore';
import { installedVersion, TUNED_RETRY_DELAY_MS, type LibraryAdapter } from './adapter.js';

const version = installedVersion('redis-semaphore');

function mutexAdapter(tuned: boolean): LibraryAdapter {
  return {
    id: tuned ? 'redis-semaphore-tuned' : 'redis-semaphore-defaults',
    library: 'redis-semaphore',
    version,
    variant: tuned ? 'tuned' : 'defaults',
    waiting: tuned
      ? `polls every ${TUNED_RETRY_DELAY_MS} ms for the whole wait`
      : 'polls every 10 ms for up to 10 s (acquireTimeout)',
    ...(tuned && { note: 'no jitter option: polls at a fixed interval' }),
    async open(connections) {
      const redis = await connections.open();
      return {
        connection: redis,
        async acquire(key, leaseMs, waitMs) {
          const options = tuned
            ? { lockTimeout: leaseMs, acquireTimeout: waitMs, retryInterval: TUNED_RETRY_DELAY_MS }
            : { lockTimeout: leaseMs };
          const mutex = new Mutex(redis, key, options);
          return (await mutex.tryAcquire()) ? () => mutex.release() : null;
        },
        close: () => Promise.resolve(),
      };
    },
  };
}

export const redisSemaphoreDefaults = mutexAdapter(false);
export const redisSemaphoreTuned = mutexAdapter(true);
