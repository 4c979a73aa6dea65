// rlock demo: three "service instances" share one Redis and guard an inventory counter, a
// nested checkout, a long job and a first-come-first-served export queue. Each step prints what
// it shows, marked ✓ or ✗, and the last line is the verdict (exit code 1 if a check failed; no
// check times anything).
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
/** What each step showed: printed as it goes, with a mark, and counted for the verdict at the end. */
const failed: string[] = [];
const show = (step: string, ok: boolean, what: string): void => {
  console.log(`${ok ? '✓' : '✗'} ${step}: ${what}`);
  if (!ok) failed.push(step);
};

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
const left = await store.get(stockKey);
show('1. no oversell', sold === 10 && left === '0', `30 buyers on 3 instances, 10 in stock: ${sold} sold, ${refused} told "sold out", ${left} left`);

// 2. Nested locking in one request: withLock runs its callback in a lock context, so the same
//    lock taken again inside (by a helper that knows nothing of the caller) re-enters it.
const order = instances[0]!.getLock('order:1001');
const reserve = async (): Promise<number> => order.withLock(() => order.getHoldCount());
const depth = await order.withLock(async () => reserve());
const lockedAfter = await order.isLocked();
show('2. nested locking', depth === 2 && !lockedAfter, `a withLock inside a withLock of the same lock re-entered it (hold count ${depth}), and it is free after: ${!lockedAfter}`);
// Outside a lock context every call is an owner of its own: the nested tryLock waits on its own hold.
await order.lock();
const nestedOutside = await order.tryLock(300);
await order.unlock();
show('   outside a context', !nestedOutside, `a nested tryLock(300) with no context waited on its own task's hold and returned ${nestedOutside}`);

// 3. A waiter gets the lock the moment it is released: it sleeps on a wake-up notice, not a poll.
const job = instances[1]!.getLock('job:nightly-report');
await job.lock(30_000);
const waiter = instances[2]!.getLock('job:nightly-report');
const waiting = waiter.tryLock(10_000, 30_000);
await sleep(100);
const releasedAt = performance.now();
await job.unlock();
const got = await waiting;
const handOverMs = performance.now() - releasedAt;
show('3. wake-up on release', got, `a waiter on another instance got the lock ${handOverMs.toFixed(2)} ms after the release (woken by a notice, no polling)`);
await waiter.unlock();

// 4. Watchdog mode (no leaseTime): the lease is renewed while held. If the lock is lost anyway
//    (here: deleted behind the holder's back), the Lease's signal aborts and `lost` is emitted.
const watched = new LockClient(connections[0]!, { keyPrefix: `rlock-demo-${run}`, watchdogTimeout: 900 });
const lost = new Promise<LockLostInfo>((resolve) => watched.once('lost', resolve));
const lease = await watched.getLock('payments:batch-7').acquire();
await sleep(1_000);
const renewed = await watched.getLock('payments:batch-7').isLocked();
show('4. watchdog', renewed, `a lock with a 0.9 s lease is still held after 1 s: the watchdog renewed it`);
// The demo deletes the key itself, as an operator or a bug might: the holder must be told.
await store.del(`{rlock-demo-${run}:payments:batch-7}`);
const info = await lost;
show('   loss told', info.reason === 'deleted' && lease.signal.aborted, `its key deleted behind the holder's back: 'lost' emitted (reason ${info.reason}), lease.signal aborted: ${lease.signal.aborted}`);
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
const inOrder = served.join() === '0,1,2,3,4,5';
show('5. fair lock', inOrder, `6 requests on 3 instances, asked in the order 0-5, were served in the order ${served.join(', ')}`);

await store.del(stockKey);
for (const locks of [...instances, watched]) await locks.close();
for (const redis of connections) redis.disconnect();
await found.release();
if (failed.length > 0) {
  console.log(`Verdict: ${failed.length} check(s) failed (${failed.join('; ')}).`);
  process.exit(1);
}
console.log('Verdict: all checks passed: rlock works against this Redis.');
