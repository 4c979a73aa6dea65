import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { LockClient } from '../../../dist/index.js';
import type { Connections } from '../connections.js';
import type { LibraryAdapter, Locker } from './adapter.js';

const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The version of the rlock build under test. */
export const rlockVersion = manifest.version;

/** A LockClient of its own for one worker, with both of its connections opened from `connections`. */
export async function openLockClient(connections: Connections): Promise<{ redis: Redis; client: LockClient }> {
  const redis = await connections.open();
  // Passed in (instead of rlock's own duplicate) only so its commands are counted too.
  const subscriber = await connections.open();
  const client = new LockClient(redis, { keyPrefix: 'bench-rlock', subscriber });
  client.on('error', (error) => console.error('rlock error:', error));
  return { redis, client };
}

/**
 * A worker on a connection of another client than ioredis, its pub/sub connection passed in
 * (instead of rlock's own) only so that it is closed with the others.
 */
export function lockerOn(redis: Locker['connection'], subscriber: Locker['connection']): Locker {
  const client = new LockClient(redis, { keyPrefix: 'bench-rlock', subscriber });
  client.on('error', (error) => console.error('rlock error:', error));
  return plainLocker(client, redis);
}

/** A worker taking plain locks of `client`: tryLock(wait, lease) + unlock(). */
export function plainLocker(client: LockClient, connection: Locker['connection']): Locker {
  return {
    connection,
    async acquire(key, leaseMs, waitMs) {
      const lock = client.getLock(key);
      return (await lock.tryLock(waitMs, leaseMs)) ? () => lock.unlock() : null;
    },
    close: () => client.close(),
  };
}

/** rlock from this repository's build (dist/): tryLock(wait, lease) + unlock(). */
export const rlock: LibraryAdapter = {
  id: 'rlock',
  library: 'rlock',
  version: rlockVersion,
  variant: 'pub/sub',
  waiting: 'no polling: sleeps until a release notice or the holder’s TTL',
  async open(connections) {
    const { redis, client } = await openLockClient(connections);
    return plainLocker(client, redis);
  },
};
