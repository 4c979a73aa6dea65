// An ESM TypeScript app on its own ioredis: every line must compile against the packed rlock.
import { Cluster, Redis } from 'ioredis';
import {
  LockClient,
  LockError,
  LockNotHeldError,
  MultiLock,
  RedLock,
  type FencedLease,
  type LockErrorCode,
  type RedisConnection,
} from 'rlock';

const locks = new LockClient(new Redis());
const withOptions = new LockClient(new Redis({ lazyConnect: true }), { keyPrefix: 'app', subscriber: new Redis() });
const onCluster = new LockClient(new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true }));
const connection: RedisConnection = new Redis({ lazyConnect: true });
const again = new LockClient(connection);

locks.on('lost', ({ name, reason }) => console.warn(name, reason));
locks.on('error', (error) => console.error(error));

export async function main(): Promise<void> {
  const fenced: FencedLease = await locks.getFencedLock('ledger').acquire();
  const token: number = fenced.token;
  await fenced.release();
  await locks.getFencedLock('ledger').withLock((lease) => lease.token + token);

  const both = new MultiLock(locks.getLock('a'), onCluster.getLock('b'));
  await both.withLock(async (lease) => lease.signal.aborted);
  const red = new RedLock(locks.getLock('job'), again.getLock('job'), withOptions.getLock('job'), { nodeTimeout: 20 });
  if (await red.tryLock(100, 1_000)) await red.unlock();

  try {
    await locks.getLock('x').unlock();
  } catch (error) {
    if (error instanceof LockNotHeldError) {
      const code: 'LOCK_NOT_HELD' = error.code;
      console.log(code);
    } else if (error instanceof LockError) {
      const code: LockErrorCode = error.code;
      console.log(code);
    }
  }
  await Promise.all([locks.close(), withOptions.close(), onCluster.close(), again.close()]);
}
