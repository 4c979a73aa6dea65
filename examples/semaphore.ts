// A semaphore and a count-down latch: at most 3 exports run at once across every process, and
// a report starts only when all 8 shards said they are ready.
// Run: node --import tsx --import ./tools/register-lua.mjs examples/semaphore.ts
// (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from PATH started on a free port.)
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockClient } from 'rlock';
import { findRedis } from '../tools/find-redis.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const found = await findRedis();
const redis = new Redis(found.url);
// Two clients stand for two processes of one service.
const keyPrefix = `example-${randomUUID().slice(0, 8)}`;
const other = redis.duplicate();
const a = new LockClient(redis, { keyPrefix });
const b = new LockClient(other, { keyPrefix });

// --- Semaphore: leased permits, renewed by the watchdog while held -----------------------------
const exportsA = a.getSemaphore('exports', { permits: 3 });
const exportsB = b.getSemaphore('exports', { permits: 3 });
let running = 0;
let most = 0;
await Promise.all(
  Array.from({ length: 8 }, (_, job) =>
    (job % 2 === 0 ? exportsA : exportsB).withPermit(async (permit) => {
      running += 1;
      most = Math.max(most, running);
      await sleep(50);
      // permit.signal aborts if the permit is lost: check it (or pass it on) in long work.
      permit.signal.throwIfAborted();
      running -= 1;
      console.log(`export ${job} done (${permit.permits} permit, id ${permit.id.slice(0, 12)}…)`);
    }),
  ),
);
console.log(`at most ${most} exports ran at once; ${await exportsA.availablePermits()} permits free now`);

// A large request (all 3 permits) with a deadline, released by `await using`.
{
  await using all = await exportsA.acquire({ permits: 3, waitTime: 1_000 });
  console.log(`took all ${all.permits} permits; tryAcquire now gets ${(await exportsA.tryAcquire()) === null ? 'null' : 'a permit'}`);
}

// --- Count-down latch: every waiter, in every process, wakes at 0 ------------------------------
const ready = a.getCountDownLatch('shards-ready');
await ready.trySetCount(8);
const reportStarts = b.getCountDownLatch('shards-ready').wait({ waitTime: 5_000 });
for (let shard = 0; shard < 8; shard += 1) await ready.countDown();
console.log(`latch opened: ${await reportStarts}, count now ${await ready.getCount()}`);

await a.close();
await b.close();
redis.disconnect();
other.disconnect();
await found.release();
if (most > 3) process.exit(1);
