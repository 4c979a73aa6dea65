// Child process for the idle-client spec (spec/clients/idle-process.spec.ts):
// node <bundle of this file> <ioredis|node-redis|glide> <url> <prefix> <once|waited>
// Takes and releases a lock (`waited`: after waiting for another client's release, so rlock's own
// pub/sub connection is open), then quits its connection WITHOUT locks.close(), prints `quit`,
// and should exit by itself: an idle LockClient never keeps a process alive.
import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { LockClient, type RedisConnection } from '../../lib/index.js';

const [family, url, prefix, mode] = process.argv.slice(2);
if (!family || !url || !prefix || !mode) throw new Error('usage: idle-worker <ioredis|node-redis|glide> <url> <prefix> <once|waited>');

/** The application's connection, and how it quits. */
async function connect(): Promise<{ connection: RedisConnection; quit: () => Promise<unknown> }> {
  if (family === 'ioredis') {
    const redis = new Redis(url!);
    return { connection: redis, quit: () => redis.quit() };
  }
  if (family === 'glide') {
    const { hostname, port } = new URL(url!);
    const glide = await GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }] });
    return { connection: glide, quit: () => Promise.resolve(glide.close()) };
  }
  const client = await createClient({ url: url! }).connect();
  return { connection: client, quit: () => client.close() };
}

const app = await connect();
const locks = new LockClient(app.connection, { keyPrefix: prefix });
const lock = locks.getLock('idle');
if (mode === 'waited') {
  // Another client holds the lock for 300 ms: this one waits on its wake-up channel, then gets it.
  const other = await connect();
  const otherLocks = new LockClient(other.connection, { keyPrefix: prefix });
  if (!(await otherLocks.getLock('idle').tryLock(0, 300))) throw new Error('the other client did not get the lock');
  if (!(await lock.tryLock(5_000))) throw new Error('the waiter did not get the lock');
  await otherLocks.close();
  await other.quit();
} else if (!(await lock.tryLock())) {
  throw new Error('did not get the lock');
}
await lock.unlock();
await app.quit();
process.stdout.write('quit\n');
