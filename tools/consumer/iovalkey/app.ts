// An ESM TypeScript app on its own iovalkey: every line must compile against the packed rlock.
import { Cluster, Redis } from 'iovalkey';
import { LockClient, MultiLock } from 'rlock';

export async function main(): Promise<void> {
  const locks = new LockClient(new Redis(), { keyPrefix: 'app', subscriber: new Redis() });
  const onCluster = new LockClient(new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true }));
  const both = new MultiLock(locks.getLock('a'), onCluster.getLock('b'));
  await both.withLock(async (lease) => lease.signal.aborted);
  await Promise.all([locks.close(), onCluster.close()]);
}
