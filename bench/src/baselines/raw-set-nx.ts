import { randomBytes } from 'node:crypto';
import type { LibraryAdapter } from '../adapters/adapter.js';

// Tokens unique per process (random prefix) and per call (counter): as cheap as a token can be.
// Random bytes per cycle would slow the floor itself and flatter every library's ratio to it.
const TOKEN_PREFIX = randomBytes(8).toString('hex');
let lastToken = 0;

/** A token no other call of this process uses. */
export function nextToken(): string {
  lastToken += 1;
  return `${TOKEN_PREFIX}:${lastToken}`;
}

export const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/**
 * The least a correct lock can do: `SET key token NX PX lease`, then a compare-and-delete
 * script (EVALSHA). One attempt, no waiting: it is only used where nothing contends.
 */
export const rawSetNx: LibraryAdapter = {
  id: 'raw-set-nx',
  library: 'SET NX PX + compare-and-delete',
  version: '',
  variant: 'baseline',
  waiting: 'one attempt',
  async open(connections) {
    const redis = await connections.open();
    const sha = (await redis.script('LOAD', COMPARE_AND_DELETE)) as string;
    return {
      connection: redis,
      async acquire(key, leaseMs) {
        const token = nextToken();
        const set = await redis.set(key, token, 'PX', leaseMs, 'NX');
        return set === 'OK' ? async () => void (await redis.evalsha(sha, 1, key, token)) : null;
      },
      close: () => Promise.resolve(),
    };
  },
};
