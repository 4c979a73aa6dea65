// rlock metrics: lock telemetry from node:diagnostics_channel, with no dependency. 4 clients x 4
// workers contend for one lock; the subscriber below builds a wait-time histogram from
// `rlock:acquire:end`, and counts hold times from `rlock:release`. An OpenTelemetry or
// prom-client histogram would subscribe the same way.
// Run: npm run example:metrics  (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from PATH
// started on a free port).
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import { diagnosticsChannels, LockClient, type AcquireEndMessage, type ReleaseMessage } from 'rlock';
import { findRedis } from '../tools/find-redis.js';

const found = await findRedis();
console.log(`Redis: ${found.url} (${found.source})`);
const prefix = `rlock-metrics-${randomUUID().slice(0, 8)}`;

// Bucket upper bounds, ms (the last one is +Inf), as a metrics library would declare them.
const BOUNDS = [1, 2, 5, 10, 25, 50, 100, 250, 500, Infinity];
const waits = new Array<number>(BOUNDS.length).fill(0);
let acquisitions = 0;
let attempts = 0;
let timedOut = 0;
let heldMs = 0;
let releases = 0;

const onAcquireEnd = (message: unknown): void => {
  const m = message as AcquireEndMessage;
  if (!m.name.startsWith('orders')) return;
  if (!m.acquired) {
    timedOut += 1;
    return;
  }
  acquisitions += 1;
  attempts += m.attempts ?? 1;
  waits[BOUNDS.findIndex((bound) => m.waitMs <= bound)]! += 1;
};
const onRelease = (message: unknown): void => {
  const m = message as ReleaseMessage;
  heldMs += m.heldMs ?? 0;
  releases += 1;
};
subscribe(diagnosticsChannels.acquireEnd, onAcquireEnd);
subscribe(diagnosticsChannels.release, onRelease);

const connections: Redis[] = [];
const clients = Array.from({ length: 4 }, () => {
  const redis = new Redis(found.url);
  connections.push(redis);
  return new LockClient(redis, { keyPrefix: prefix });
});
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// 16 workers, 10 rounds each: hold the lock 2-6 ms, think 0-4 ms, give up after 2 s of waiting.
const started = performance.now();
await Promise.all(
  Array.from({ length: 16 }, async (_, worker) => {
    const lock = clients[worker % clients.length]!.getLock('orders');
    for (let round = 0; round < 10; round += 1) {
      if (!(await lock.tryLock(2_000, 10_000))) continue;
      try {
        await sleep(2 + Math.random() * 4);
      } finally {
        await lock.unlock();
      }
      await sleep(Math.random() * 4);
    }
  }),
);
const elapsed = performance.now() - started;

unsubscribe(diagnosticsChannels.acquireEnd, onAcquireEnd);
unsubscribe(diagnosticsChannels.release, onRelease);
for (const locks of clients) await locks.close();
for (const redis of connections) redis.disconnect();
await found.release();

console.log(`${acquisitions} acquisitions of "orders" in ${Math.round(elapsed)} ms by 16 workers on 4 clients`);
console.log(`(${timedOut} gave up; ${(attempts / Math.max(1, acquisitions)).toFixed(2)} attempts each; mean hold ${(heldMs / Math.max(1, releases)).toFixed(1)} ms)`);
console.log('wait time (rlock:acquire:end waitMs):');
const widest = Math.max(...waits);
BOUNDS.forEach((bound, i) => {
  const label = bound === Infinity ? `> ${BOUNDS[i - 1]} ms` : `<= ${bound} ms`;
  const bar = '#'.repeat(Math.round((waits[i]! / Math.max(1, widest)) * 40));
  console.log(`  ${label.padStart(10)} | ${bar} ${waits[i]}`);
});
if (acquisitions + timedOut !== 160 || releases !== acquisitions) process.exit(1);
