import { ExecutionError, Redlock } from '@sesamecare-oss/redlock';
import { installedVersion, TUNED_RETRY_DELAY_MS, TUNED_RETRY_JITTER_MS, tunedRetries, type LibraryAdapter } from './adapter.js';

const version = installedVersion('@sesamecare-oss/redlock');

function sesamecareAdapter(tuned: boolean): LibraryAdapter {
  return {
    id: tuned ? 'sesamecare-redlock-tuned' : 'sesamecare-redlock-defaults',
    library: '@sesamecare-oss/redlock',
    version,
    variant: tuned ? 'tuned' : 'defaults',
    waiting: tuned
      ? `polls every ${TUNED_RETRY_DELAY_MS} ± ${TUNED_RETRY_JITTER_MS} ms for the whole wait`
      : 'polls every 200 ± 100 ms, 10 retries',
    async open(connections) {
      const redis = await connections.open();
      const redlock = new Redlock([redis]);
      return {
        connection: redis,
        async acquire(key, leaseMs, waitMs) {
          try {
            const lock = tuned
              ? await redlock.acquire([key], leaseMs, {
                  retryCount: tunedRetries(waitMs),
                  retryDelay: TUNED_RETRY_DELAY_MS,
                  retryJitter: TUNED_RETRY_JITTER_MS,
                })
              : await redlock.acquire([key], leaseMs);
            return async () => void (await lock.release());
          } catch (error) {
            if (error instanceof ExecutionError) return null;
            throw error;
          }
        },
        close: () => Promise.resolve(),
      };
    },
  };
}

export const sesamecareRedlockDefaults = sesamecareAdapter(false);
export const sesamecareRedlockTuned = sesamecareAdapter(true);
