// Handing a lock to another process: an API process takes the lock of an invoice, puts a job on a
// queue with the lock's handle, and answers at once; the worker that runs the job adopts the hold,
// keeps it while it works, and releases it. Nobody else can take the invoice in between.
// Run: node --import tsx --import ./tools/register-lua.mjs examples/handoff.ts
// (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from PATH started on a free port.)
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockClient, LockLostError, type LeaseHandle } from 'rlock';
import { findRedis } from '../tools/find-redis.js';

const found = await findRedis();
const redis = new Redis(found.url);
const keyPrefix = `example-${randomUUID().slice(0, 8)}`;
const queue = `${keyPrefix}:jobs`;
// Two clients on two connections stand for two processes: the API and the worker.
const workerRedis = redis.duplicate();
const api = new LockClient(redis, { keyPrefix, watchdogTimeout: 3_000 });
const worker = new LockClient(workerRedis, { keyPrefix, watchdogTimeout: 3_000 });
for (const client of [api, worker]) client.on('lost', (info) => console.log(`lost ${info.name}: ${info.reason}`));

// --- The API process: take the lock, enqueue the job with the handle, answer ------------------
const lease = await api.getLock('invoice:42').acquire({ waitTime: 1_000 });
const handle = await lease.handOff();
console.log(`api: took invoice:42 and handed it off (this Lease's signal aborted: ${lease.signal.aborted}, ${String(lease.signal.reason)})`);
await redis.lpush(queue, JSON.stringify({ invoice: 42, handle }));
await lease.release(); // resolves, changes nothing: the hold is the worker's to release now
// Meanwhile nobody can take the invoice: the hold is kept for `watchdogTimeout` until adopted.
console.log(`api: can another request take invoice:42 now? ${await api.getLock('invoice:42').tryLock()}`);

// --- The worker: pop the job, adopt the hold, work, release -----------------------------------
const [, raw] = (await workerRedis.brpop(queue, 5))!;
const job = JSON.parse(raw) as { invoice: number; handle: LeaseHandle };
const held = await worker.adopt(job.handle);
console.log(`worker: adopted invoice:${job.invoice} (owner ${held.owner.slice(0, 13)}…), renewed by this process's watchdog`);
try {
  // Longer than the watchdog's lease: renewed here, the API process renews nothing any more.
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  held.signal.throwIfAborted();
  console.log(`worker: charged invoice ${job.invoice}; the lock is still held: ${await worker.getLock('invoice:42').isLocked()}`);
} finally {
  await held.release();
}
console.log(`worker: released; locked now? ${await worker.getLock('invoice:42').isLocked()}`);

// A handle is adopted once: a second delivery of the same job is refused.
try {
  await worker.adopt(job.handle);
} catch (error) {
  console.log(`worker: adopting the same handle again: ${error instanceof LockLostError ? 'LockLostError' : String(error)}`);
}

await api.close();
await worker.close();
await redis.del(queue);
redis.disconnect();
workerRedis.disconnect();
await found.release();
