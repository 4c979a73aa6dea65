import type { LibraryAdapter } from './adapter.js';
import { lockerOn, rlockVersion } from './rlock.js';

/** rlock from this repository's build on Valkey GLIDE: tryLock(wait, lease) + unlock(). */
export const rlockGlide: LibraryAdapter = {
  id: 'rlock-glide',
  library: 'rlock',
  version: rlockVersion,
  variant: 'on Valkey GLIDE',
  waiting: 'no polling: sleeps until a release notice or the holder’s TTL',
  baseline: 'raw-set-nx-glide',
  async open(connections) {
    return lockerOn(await connections.openGlide(), await connections.openGlide());
  },
};
