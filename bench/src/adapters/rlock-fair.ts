import type { LibraryAdapter } from './adapter.js';
import { openLockClient, rlockVersion } from './rlock.js';

/** rlock's fair lock from this repository's build (dist/): getFairLock, tryLock(wait, lease) + unlock(). */
export const rlockFair: LibraryAdapter = {
  id: 'rlock-fair',
  library: 'rlock',
  version: rlockVersion,
  variant: 'fair lock',
  waiting: 'queues in Redis in the order it asked; a release notifies only the head, which then asks once',
  async open(connections) {
    const { redis, client } = await openLockClient(connections);
    return {
      connection: redis,
      async acquire(key, leaseMs, waitMs) {
        const lock = client.getFairLock(key);
        return (await lock.tryLock(waitMs, leaseMs)) ? () => lock.unlock() : null;
      },
      close: () => client.close(),
    };
  },
};
