import type { LibraryAdapter } from '../adapters/adapter.js';
import { COMPARE_AND_DELETE, nextToken } from './raw-set-nx.js';

/** The raw baseline (raw-set-nx.ts) on Valkey GLIDE: the floor rlock on GLIDE is compared with. */
export const rawSetNxGlide: LibraryAdapter = {
  id: 'raw-set-nx-glide',
  library: 'SET NX PX + compare-and-delete',
  version: '',
  variant: 'baseline, Valkey GLIDE',
  waiting: 'one attempt',
  async open(connections) {
    const redis = await connections.openGlide();
    const sha = (await redis.customCommand(['SCRIPT', 'LOAD', COMPARE_AND_DELETE])) as string;
    return {
      connection: redis,
      async acquire(key, leaseMs) {
        const token = nextToken();
        const set = await redis.customCommand(['SET', key, token, 'PX', String(leaseMs), 'NX']);
        return set === 'OK' ? async () => void (await redis.customCommand(['EVALSHA', sha, '1', key, token])) : null;
      },
      close: () => Promise.resolve(),
    };
  },
};
