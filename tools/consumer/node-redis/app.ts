// An ESM TypeScript app on its own node-redis: every line must compile against the packed rlock.
import { createClient, createCluster, createSentinel } from 'redis';
import { LockClient, MultiLock, RedLock, type RedisConnection } from 'rlock';

export async function main(): Promise<void> {
  const redis = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
  const resp3 = await createClient({ RESP: 3 }).connect();
  const subscriber = redis.duplicate();
  await subscriber.connect();
  const locks = new LockClient(redis, { keyPrefix: 'app', subscriber });
  const other = new LockClient(resp3);
  const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] });
  await cluster.connect();
  const onCluster = new LockClient(cluster);
  const sentinel = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] });
  await sentinel.connect();
  const onSentinel = new LockClient(sentinel);
  const connection: RedisConnection = redis;

  await locks.getLock('a').withLock(async (lease) => lease.signal.aborted);
  const both = new MultiLock(locks.getLock('a'), onCluster.getLock('b'));
  await both.withLock(async (lease) => lease.name);
  const red = new RedLock(locks.getLock('job'), other.getLock('job'), onSentinel.getLock('job'));
  if (await red.tryLock(100, 1_000)) await red.unlock();
  await Promise.all([locks.close(), other.close(), onCluster.close(), onSentinel.close(), new LockClient(connection).close()]);
  await Promise.all([redis.close(), resp3.close(), subscriber.close(), cluster.close(), sentinel.close()]);
}
