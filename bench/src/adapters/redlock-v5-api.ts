import type { Redis } from 'ioredis';
import { TUNED_RETRY_DELAY_MS, TUNED_RETRY_JITTER_MS, tunedRetries, type LibraryAdapter } from './adapter.js';

/** The part of redlock 5's API the bench uses; @sesamecare-oss/redlock, its fork, has the same. */
export interface RedlockV5Api {
  Redlock: new (clients: Redis[]) => {
    acquire(
      resources: string[],
      durationMs: number,
      settings?: { retryCount?: number; retryDelay?: number; retryJitter?: number },
    ): Promise<{ release(): Promise<unknown> }>;
  };
  /** What acquire throws when it gave up. */
  ExecutionError: new (...args: never[]) => Error;
}

/** The defaults and tuned adapters of a library with redlock 5's API. */
export function redlockV5Adapters(
  idPrefix: string,
  library: string,
  version: string,
  { Redlock, ExecutionError }: RedlockV5Api,
): { defaults: LibraryAdapter; tuned: LibraryAdapter } {
  const adapter = (tuned: boolean): LibraryAdapter => ({
    id: `${idPrefix}-${tuned ? 'tuned' : 'defaults'}`,
    library,
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
  });
  return { defaults: adapter(false), tuned: adapter(true) };
}
