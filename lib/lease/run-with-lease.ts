import { currentContext, runInNewContext } from '../context.js';

/**
 * `withLock`: acquires a lease, runs `body(lease)` and releases in `finally`, in a lock context
 * (a new one unless the caller is in one), so nested calls on the same lock re-enter it. When
 * `body` throws, its error is the one to see; a release that fails after it goes to `reportError`.
 */
export function runWithLease<L extends { release(): Promise<void> }, T>(
  acquire: () => Promise<L>,
  body: (lease: L) => T | Promise<T>,
  reportError: (error: unknown) => void,
): Promise<T> {
  const run = async (): Promise<T> => {
    const lease = await acquire();
    let result: T;
    try {
      result = await body(lease);
    } catch (error) {
      await lease.release().catch(reportError);
      throw error;
    }
    await lease.release();
    return result;
  };
  return currentContext() ? run() : runInNewContext(run);
}
