import type { LibraryAdapter } from './adapter.js';
import { lockerOn, rlockVersion } from './rlock.js';

/** rlock from this repository's build on node-redis (RESP2): tryLock(wait, lease) + unlock(). */
export const rlockNodeRedis: LibraryAdapter = {
  id: 'rlock-node-redis',
  library: 'rlock',
  version: rlockVersion,
  variant: 'on node-redis',
  waiting: 'no polling: sleeps until a release notice or the holder’s TTL',
  baseline: 'raw-set-nx-node-redis',
  async open(connections) {
    return lockerOn(await connections.openNodeRedis(), await connections.openNodeRedis());
  },
};
