import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { installedVersion, TUNED_RETRY_DELAY_MS, TUNED_RETRY_JITTER_MS, tunedRetries, type LibraryAdapter } from './adapter.js';

// redlock 4 ships CommonJS without types: the part used here, typed.
interface Redlock4Lock {
  unlock(): Promise<unknown>;
}
interface Redlock4 {
  lock(resource: string, ttlMs: number): Promise<Redlock4Lock>;
  lockWithOptions(resource: string, ttlMs: number, options: { retryCount: number }): Promise<Redlock4Lock>;
}
type Redlock4Constructor = new (
  clients: Redis[],
  options?: { retryCount?: number; retryDelay?: number; retryJitter?: number },
) => Redlock4;
interface Redlock4Module extends Redlock4Constructor {
  LockError: new (...args: never[]) => Error;
}

const Redlock = createRequire(import.meta.url)('redlock4') as Redlock4Module;
const version = installedVersion('redlock4');

function redlock4Adapter(tuned: boolean): LibraryAdapter {
  return {
    id: tuned ? 'redlock4-tuned' : 'redlock4-defaults',
    library: 'redlock',
    version,
    variant: tuned ? 'tuned' : 'defaults',
    waiting: tuned
      ? `polls every ${TUNED_RETRY_DELAY_MS} ± ${TUNED_RETRY_JITTER_MS} ms for the whole wait`
      : 'polls every 200 ± 100 ms, 10 retries',
    async open(connections) {
      const redis = await connections.open();
      const redlock = tuned
        ? new Redlock([redis], { retryDelay: TUNED_RETRY_DELAY_MS, retryJitter: TUNED_RETRY_JITTER_MS })
        : new Redlock([redis]);
      return {
        connection: redis,
        async acquire(key, leaseMs, waitMs) {
          try {
            const lock = tuned
              ? await redlock.lockWithOptions(key, leaseMs, { retryCount: tunedRetries(waitMs) })
              : await redlock.lock(key, leaseMs);
            return async () => void (await lock.unlock());
          } catch (error) {
            if (error instanceof Redlock.LockError) return null;
            throw error;
          }
        },
        close: () => Promise.resolve(),
      };
    },
  };
}

export const redlock4Defaults = redlock4Adapter(false);
export const redlock4Tuned = redlock4Adapter(true);
