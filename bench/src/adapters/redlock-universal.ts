import { createLock, IoredisAdapter, LockAcquisitionError, type Lock } from 'redlock-universal';
import { installedVersion, TUNED_RETRY_DELAY_MS, tunedRetries, type LibraryAdapter } from './adapter.js';

const version = installedVersion('redlock-universal');

function universalAdapter(tuned: boolean): LibraryAdapter {
  return {
    id: tuned ? 'redlock-universal-tuned' : 'redlock-universal-defaults',
    library: 'redlock-universal',
    version,
    variant: tuned ? 'tuned' : 'defaults',
    waiting: tuned
      ? `polls every ${TUNED_RETRY_DELAY_MS} ms for the whole wait`
      : 'polls every 100 ms, 3 retries',
    note: `declares engines node >= 22; run here on Node ${process.versions.node}${tuned ? '; no jitter option' : ''}`,
    async open(connections) {
      const redis = await connections.open();
      const adapter = new IoredisAdapter(redis);
      // A lock object per key, kept: its health check PINGs on first use, then every 30 s.
      const locks = new Map<string, Lock>();
      const lockFor = (key: string, leaseMs: number, waitMs: number): Lock => {
        const id = `${key}\u0000${leaseMs}\u0000${waitMs}`;
        let lock = locks.get(id);
        if (!lock) {
          lock = tuned
            ? createLock({ adapter, key, ttl: leaseMs, retryAttempts: tunedRetries(waitMs), retryDelay: TUNED_RETRY_DELAY_MS })
            : createLock({ adapter, key, ttl: leaseMs });
          locks.set(id, lock);
        }
        return lock;
      };
      return {
        connection: redis,
        async acquire(key, leaseMs, waitMs) {
          const lock = lockFor(key, leaseMs, waitMs);
          try {
            const handle = await lock.acquire();
            return async () => void (await lock.release(handle));
          } catch (error) {
            if (error instanceof LockAcquisitionError) return null;
            throw error;
          }
        },
        close: () => Promise.resolve(),
      };
    },
  };
}

export const redlockUniversalDefaults = universalAdapter(false);
export const redlockUniversalTuned = universalAdapter(true);
