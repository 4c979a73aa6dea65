import { LockClient } from '../../../dist/index.js';
import type { LibraryAdapter } from './adapter.js';
import { plainLocker, rlockVersion } from './rlock.js';

/** rlock from this repository's build on node-redis (RESP2): tryLock(wait, lease) + unlock(). */
export const rlockNodeRedis: LibraryAdapter = {
  id: 'rlock-node-redis',
  library: 'rlock',
  version: rlockVersion,
  variant: 'on node-redis',
  waiting: 'no polling: sleeps until a release notice or the holder’s TTL',
  baseline: 'raw-set-nx-node-redis',
  async open(connections) {
    const redis = await connections.openNodeRedis();
    // Passed in (instead of rlock's own duplicate) only so it is closed with the others.
    const subscriber = await connections.openNodeRedis();
    const client = new LockClient(redis, { keyPrefix: 'bench-rlock', subscriber });
    client.on('error', (error) => console.error('rlock error:', error));
    return plainLocker(client, redis);
  },
};
