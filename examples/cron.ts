// A scheduled job on many replicas, run once per tick: every replica's timer fires (a little
// apart, as clocks and event loops do), each calls runExclusive, and exactly one runs the job;
// `atLeastFor` keeps the lock a while after a fast run, so a replica whose timer fires late does
// not run it again.
// Run: npm run example:cron
// (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from PATH started on a free port.)
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockClient } from 'rlock';
import { findRedis } from '../tools/find-redis.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const found = await findRedis();
const keyPrefix = `example-${randomUUID().slice(0, 8)}`;
const connections: Redis[] = [];
const replicas = ['replica-a', 'replica-b', 'replica-c'].map((name) => {
  const redis = new Redis(found.url);
  connections.push(redis);
  return { name, locks: new LockClient(redis, { keyPrefix }) };
});

const TICK_MS = 1_000;
const TICKS = 3;
const runs: string[] = [];

/** The job: fast here (50 ms); a real one might take minutes (then pick atMostFor above that). */
async function sendDailyReport(replica: string, tick: number): Promise<string> {
  await sleep(50);
  return `report ${tick} sent by ${replica}`;
}

// Each replica runs this on its own timer: setInterval here; a NestJS @Cron method would make the
// same call (see docs/leadership.md).
const timers = replicas.map(({ name, locks }, i) => {
  let tick = 0;
  return setInterval(() => {
    tick += 1;
    const thisTick = tick;
    // Replicas fire up to 200 ms apart.
    void sleep(i * 100).then(async () => {
      const result = await locks.runExclusive('daily-report', () => sendDailyReport(name, thisTick), {
        atMostFor: 60_000, // a crashed run frees the lock after this
        atLeastFor: 500, // held at least this long: later timers of the same tick skip
      });
      if (result.ran) {
        runs.push(result.value);
        console.log(result.value);
      } else console.log(`  ${name}: tick ${thisTick} skipped (another replica ran it)`);
    });
  }, TICK_MS);
});

await sleep(TICK_MS * TICKS + 600);
for (const timer of timers) clearInterval(timer);
for (const { locks } of replicas) await locks.close();
for (const redis of connections) redis.disconnect();
await found.release();

console.log(`${runs.length} runs in ${TICKS} ticks`);
if (runs.length !== TICKS) process.exit(1);
