// Semaphore scenario, on a redis-server this script spawns (and stops):
//   node --import tsx --import ./tools/register-lua.mjs bench/semaphore.ts [seconds]
// (needs the bench's dependencies: npm --prefix bench ci)
// 20 workers (one connection each, one process), 5 permits, each loop: acquire 1 permit → hold
// 1 ms → release → think 2 ms. rlock's Semaphore against redis-semaphore's Semaphore (defaults:
// polls every 10 ms; tuned: every 1 ms). Per library: acquisitions/s and ÷ ideal (5 ÷ (hold +
// EVALSHA p50)), wait p50/p99, commands sent and Redis CPU per acquisition, over-grants (seen by
// a local counter: all holders are in this process).
import { Redis } from 'ioredis';
import { Semaphore as RedisSemaphore } from 'redis-semaphore';
import { LockClient } from '../lib/index.js';
import { spawnRedis } from '../tools/redis-server.js';

const SECONDS = Number(process.argv[2] ?? 5);
const WORKERS = 20;
const PERMITS = 5;
const HOLD_MS = 1;
const THINK_MS = 2;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

interface Library {
  readonly label: string;
  open(redis: Redis, worker: number): Promise<{ acquire(): Promise<() => Promise<unknown>>; close(): Promise<void> }>;
}

const libraries: Library[] = [
  {
    label: 'rlock Semaphore',
    open: (redis) => {
      const locks = new LockClient(redis, { keyPrefix: 'bench' });
      const sem = locks.getSemaphore('sem', { permits: PERMITS });
      return Promise.resolve({
        acquire: async () => {
          const permit = await sem.acquire({ waitTime: 10_000 });
          return () => permit.release();
        },
        close: () => locks.close(),
      });
    },
  },
  ...[
    { label: 'redis-semaphore Semaphore (defaults)', retryInterval: undefined },
    { label: 'redis-semaphore Semaphore (tuned, 1 ms)', retryInterval: 1 },
  ].map(
    ({ label, retryInterval }): Library => ({
      label,
      open: (redis) =>
        Promise.resolve({
          acquire: async () => {
            const sem = new RedisSemaphore(redis, 'bench-rs-sem', PERMITS, {
              lockTimeout: 10_000,
              acquireTimeout: 10_000,
              ...(retryInterval === undefined ? {} : { retryInterval }),
            });
            await sem.acquire();
            return () => sem.release();
          },
          close: () => Promise.resolve(),
        }),
    }),
  ),
];

// Commands sent, counted at the client (Redis' own count includes the calls scripts make).
let sent = 0;
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
  sent += 1;
  return sendCommand.apply(this, args);
};

async function stats(admin: Redis): Promise<{ commands: number; cpu: number; byName: Record<string, number> }> {
  const info = await admin.info('all');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  const byName: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) byName[match[1]!] = Number(match[2]);
  return { commands: sent, cpu: field('used_cpu_sys') + field('used_cpu_user'), byName };
}

/** EVALSHA round trip p50 on an idle server, ms. */
async function evalshaP50(redis: Redis): Promise<number> {
  const sha = (await redis.script('LOAD', 'return 1')) as string;
  const times: number[] = [];
  for (let i = 0; i < 2_000; i += 1) {
    const started = performance.now();
    await redis.evalsha(sha, 0);
    times.push(performance.now() - started);
  }
  return percentile(times.sort((a, b) => a - b), 50);
}

const server = await spawnRedis();
const admin = new Redis(server.url);
const p50 = await evalshaP50(admin);
const ideal = (PERMITS / (HOLD_MS + p50)) * 1_000;
console.log(`EVALSHA p50 ${p50.toFixed(3)} ms → ideal ${ideal.toFixed(0)} acquisitions/s`);
console.log('| library | acq/s | ÷ ideal | wait p50 ms | wait p99 ms | commands/acq | Redis CPU µs/acq | over-grants |');
console.log('|---|---|---|---|---|---|---|---|');
for (const library of libraries) {
  const connections = Array.from({ length: WORKERS }, () => new Redis(server.url));
  const workers = await Promise.all(connections.map((redis, i) => library.open(redis, i)));
  await Promise.all(connections.map((redis) => redis.ping()));
  let inside = 0;
  let overGrants = 0;
  const waits: number[] = [];
  let stop = false;
  const before = await stats(admin);
  const started = performance.now();
  await Promise.all(
    workers.map(async (worker) => {
      while (!stop) {
        const asked = performance.now();
        const release = await worker.acquire();
        waits.push(performance.now() - asked);
        inside += 1;
        if (inside > PERMITS) overGrants += 1;
        await sleep(HOLD_MS);
        inside -= 1;
        await release();
        await sleep(THINK_MS);
      }
    }).concat([sleep(SECONDS * 1_000).then(() => void (stop = true))]),
  );
  const elapsed = (performance.now() - started) / 1_000;
  const after = await stats(admin);
  const n = waits.length;
  waits.sort((a, b) => a - b);
  const rate = n / elapsed;
  console.log(
    `| ${library.label} | ${rate.toFixed(0)} | ${(rate / ideal).toFixed(2)} | ${percentile(waits, 50).toFixed(2)} | ${percentile(waits, 99).toFixed(2)} | ` +
      `${((after.commands - before.commands) / n).toFixed(2)} | ${(((after.cpu - before.cpu) * 1e6) / n).toFixed(1)} | ${overGrants} |`,
  );
  if (process.env.BENCH_DETAIL) {
    const delta = Object.entries(after.byName).map(([name, calls]) => `${name} ${((calls - (before.byName[name] ?? 0)) / n).toFixed(2)}`);
    console.log(`  per acquisition (in Redis, scripts' calls included): ${delta.join(', ')}`);
  }
  for (const worker of workers) await worker.close();
  for (const redis of connections) redis.disconnect();
  await sleep(300);
}
admin.disconnect();
await server.stop();
