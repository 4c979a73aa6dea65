import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { installedVersion, TUNED_RETRY_DELAY_MS, TUNED_RETRY_JITTER_MS, tunedRetries, type LibraryAdapter } from './adapter.js';

// The beta's types cannot be resolved through its exports map: the part used here, typed.
interface Redlock5Lock {
  release(): Promise<unknown>;
}
interface Redlock5Settings {
  retryCount?: number;
  retryDelay?: number;
  retryJitter?: number;
}
interface Redlock5Module {
  default: new (clients: Redis[], settings?: Redlock5Settings) => {
    acquire(resources: string[], durationMs: number, settings?: Redlock5Settings): Promise<Redlock5Lock>;
  };
  ExecutionError: new (...args: never[]) => Error;
}

const { default: Redlock, ExecutionError } = createRequire(import.meta.url)('redlock5') as Redlock5Module;
const version = installedVersion('redlock5');

function redlock5Adapter(tuned: boolean): LibraryAdapter {
  return {
    id: tuned ? 'redlock5-tuned' : 'redlock5-defaults',
    library: 'redlock',
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

export const redlock5Defaults = redlock5Adapter(false);
export const redlock5Tuned = redlock5Adapter(true);
