import type { LibraryAdapter } from '../adapters/adapter.js';
import { COMPARE_AND_DELETE, nextToken } from './raw-set-nx.js';

/** The raw baseline (raw-set-nx.ts) on node-redis: the floor rlock on node-redis is compared with. */
export const rawSetNxNodeRedis: LibraryAdapter = {
  id: 'raw-set-nx-node-redis',
  library: 'SET NX PX + compare-and-delete',
  version: '',
  variant: 'baseline, node-redis',
  waiting: 'one attempt',
  async open(connections) {
    const redis = await connections.openNodeRedis();
    const sha = await redis.sendCommand<string>(['SCRIPT', 'LOAD', COMPARE_AND_DELETE]);
    return {
      connection: redis,
      async acquire(key, leaseMs) {
        const token = nextToken();
        const set = await redis.sendCommand(['SET', key, token, 'PX', String(leaseMs), 'NX']);
        return (set as unknown) === 'OK' ? async () => void (await redis.sendCommand(['EVALSHA', sha, '1', key, token])) : null;
      },
      close: () => Promise.resolve(),
    };
  },
};
