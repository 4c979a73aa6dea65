// rlock demo: three "service instances" share one Redis and guard an inventory counter, a
// nested checkout, a long job and a first-come-first-served export queue.
// Run: npm run demo  (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from PATH started on
// a free port).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockClient, type LockLostInfo } from 'rlock';
import { findRedis } from '../tools/find-redis.js';

const found = await findRedis();
console.log(`Redis: ${found.url} (${found.source})`);
const run = randomUUID().slice(0, 8);
const connections: Redis[] = [];
const instance = (): LockClient => {
  const redis = new Redis(found.url);
  connections.push(redis);
  // A per-run prefix keeps the demo's keys apart from anything else on that server.
  return new LockClient(redis, { keyPrefix: `rlock-demo-${run}` });
};
const instances = [instance(), instance(), instance()];
const store = connections[0]!;
const stockKey = `rlock-demo-${run}:stock`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// 1. tryLock(wait, lease): 30 buyers on 3 instances race for 10 items. Without the lock the
//    read-check-write below oversells; with it, exactly 10 sell.
await store.set(stockKey, 10);
let sold = 0;
let refused = 0;
await Promise.all(
  Array.from({ length: 30 }, async (_, buyer) => {
    const lock = instances[buyer % 3]!.getLock('inventory:sku-42');
    if (!(await lock.tryLock(5_000, 10_000))) return;
    try {
      const stock = Number(await store.get(stockKey));
      await sleep(1); // a slow check: another buyer would slip in here without the lock
      if (stock > 0) {
        await store.set(stockKey, stock - 1);
        sold += 1;
      } else {
        refused += 1;
      }
    } finally {
      await lock.unlock();
    }
  }),
);
console.log(`1. inventory: sold ${sold}, refused ${refused}, stock left ${await store.get(stockKey)}`);

// 2. Nested locking in one request: withLock runs its callback in a lock context, so the same
//    lock taken again inside (by a helper that knows nothing of the caller) re-enters it.
const order = instances[0]!.getLock('order:1001');
const reserve = async (): Promise<number> => order.withLock(() => order.getHoldCount());
const depth = await order.withLock(async () => reserve());
console.log(`2. nested: the inner withLock saw hold count ${depth}; locked afterwards: ${await order.isLocked()}`);

// 3. A waiter gets the lock the moment it is released: it sleeps on a wake-up notice, not a poll.
const job = instances[1]!.getLock('job:nightly-report');
await job.lock(30_000);
const waiter = instances[2]!.getLock('job:nightly-report');
const waiting = waiter.tryLock(10_000, 30_000);
await sleep(100);
const releasedAt = performance.now();
await job.unlock();
const got = await waiting;
console.log(`3. hand-over: waiter acquired=${got} ${(performance.now() - releasedAt).toFixed(2)} ms after the release`);
await waiter.unlock();

// 4. Watchdog mode (no leaseTime): the lease is renewed while held. If the lock is lost anyway
//    (here: deleted behind the holder's back), the Lease's signal aborts and `lost` is emitted.
const watched = new LockClient(connections[0]!, { keyPrefix: `rlock-demo-${run}`, watchdogTimeout: 900 });
const lost = new Promise<LockLostInfo>((resolve) => watched.once('lost', resolve));
const lease = await watched.getLock('payments:batch-7').acquire();
await sleep(1_000);
console.log(`4. watchdog: still held after 1 s with a 0.9 s lease: ${await watched.getLock('payments:batch-7').isLocked()}`);
await store.del(`{rlock-demo-${run}:payments:batch-7}`);
const info = await lost;
console.log(`   lost: reason=${info.reason}, lease.signal.aborted=${lease.signal.aborted}`);
await lease.release();

// 5. Fair lock: six requests on three instances ask for it one after another while it is held;
//    they get it in exactly that order, each woken only when it is its turn.
const exportLock = instances[0]!.getFairLock('exports:customer-7');
await exportLock.lock();
const served: number[] = [];
const requests: Promise<void>[] = [];
for (let request = 0; request < 6; request += 1) {
  requests.push(instances[(request * 2) % 3]!.getFairLock('exports:customer-7').withLock(() => void served.push(request)));
  await sleep(50); // ask in a known order
}
await exportLock.unlock();
await Promise.all(requests);
console.log(`5. fair lock: requests served in the order ${served.join(', ')}`);

await store.del(stockKey);
for (const locks of [...instances, watched]) await locks.close();
for (const redis of connections) redis.disconnect();
await found.release();
const inOrder = served.join() === '0,1,2,3,4,5';
if (sold !== 10 || depth !== 2 || !got || info.reason !== 'deleted' || !inOrder) process.exit(1);
