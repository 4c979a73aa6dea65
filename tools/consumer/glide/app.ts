// An ESM TypeScript app on its own Valkey GLIDE: every line must compile against the packed rlock.
import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { LockClient, MultiLock } from 'rlock';

export async function main(): Promise<void> {
  const glide = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: 6379 }], requestTimeout: 2_000 });
  const subscriber = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: 6379 }] });
  const locks = new LockClient(glide, { keyPrefix: 'app', subscriber });
  const onCluster = new LockClient(await GlideClusterClient.createClient({ addresses: [{ host: '127.0.0.1', port: 7000 }] }));
  const both = new MultiLock(locks.getLock('a'), onCluster.getLock('b'));
  await both.withLock(async (lease) => lease.signal.aborted);
  await Promise.all([locks.close(), onCluster.close()]);
  glide.close();
  subscriber.close();
}
