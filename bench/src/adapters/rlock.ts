import { readFileSync } from 'node:fs';
import { LockClient } from '../../../dist/index.js';
import type { LibraryAdapter } from './adapter.js';

const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

/** rlock from this repository's build (dist/): tryLock(wait, lease) + unlock(). */
export const rlock: LibraryAdapter = {
  id: 'rlock',
  library: 'rlock',
  version: manifest.version,
  variant: 'pub/sub',
  waiting: 'no polling: sleeps until a release notice or the holder’s TTL',
  async open(connections) {
    const redis = await connections.open();
    // Passed in (instead of rlock's own duplicate) only so its commands are counted too.
    const subscriber = await connections.open();
    const client = new LockClient(redis, { keyPrefix: 'bench-rlock', subscriber });
    client.on('error', (error) => console.error('rlock error:', error));
    return {
      connection: redis,
      async acquire(key, leaseMs, waitMs) {
        const lock = client.getLock(key);
        return (await lock.tryLock(waitMs, leaseMs)) ? () => lock.unlock() : null;
      },
      close: () => client.close(),
    };
  },
};
