// Fair lock figures, on a redis-server this script spawns (and stops):
//   node --import tsx --import ./tools/register-lua.mjs bench/fair-lock.ts [handoffs]
// 1. Hand-over gap: 11 workers on 11 clients loop lock → unlock on one fair lock, so 10 are
//    queued at every release; the gap runs from the holder calling unlock() to the head's
//    lock() resolving (one process, one clock).
// 2. Queue-length cost: with N waiting calls queued, the commands and the script time (SLOWLOG
//    with slowlog-log-slower-than 0, in µs) of a newcomer that queues, re-checks and gives up,
//    and of one turn (the holder's release and whatever the head then sends).
import { Redis } from 'ioredis';
import { LockClient } from '../lib/index.js';
import { lockKeys } from '../lib/keys.js';
import { SUBSCRIPTION_LINGER_MS } from '../lib/options.js';
import { CommandRecorder } from '../spec/helpers/command-stats.js';
import { spawnRedis } from '../tools/redis-server.js';

const HANDOFFS = Number(process.argv[2] ?? 3_000);
const WARMUP = 200;
const QUEUE_LENGTHS = [10, 1_000, 10_000];

const server = await spawnRedis();
const admin = new Redis(server.url);
const connections: Redis[] = [admin];
const clients: LockClient[] = [];
const client = (options: { fairLockWaitTimeout?: number } = {}): LockClient => {
  const redis = new Redis(server.url);
  connections.push(redis);
  const locks = new LockClient(redis, { keyPrefix: 'bench', ...options });
  clients.push(locks);
  return locks;
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check: () => Promise<boolean> | boolean): Promise<void> => {
  const deadline = performance.now() + 60_000;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
};
/** Waits until the server has been idle (but for this check) for 200 ms. */
const quiet = async (): Promise<void> => {
  const processed = async (): Promise<number> => Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))![1]);
  let before = await processed();
  for (;;) {
    await sleep(200);
    const now = await processed();
    if (now - before <= 1) return;
    before = now;
  }
};
/** Loads the acquire, leave and release scripts on the client's connection (the first call of each is an EVAL). */
const warmUp = async (locks: LockClient): Promise<void> => {
  const warm = locks.getFairLock('warm-up');
  const lease = await warm.acquire();
  await warm.tryLock(5);
  await lease.release();
};
const percentile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function handOverGaps(): Promise<number[]> {
  const gaps: number[] = [];
  let releasedAt: number | undefined;
  let left = WARMUP + HANDOFFS;
  const workers = Array.from({ length: 11 }, () => client().getFairLock('gap'));
  await Promise.all(
    workers.map(async (lock) => {
      while (left > 0) {
        await lock.lock();
        const acquiredAt = performance.now();
        if (releasedAt !== undefined && left <= HANDOFFS) gaps.push(acquiredAt - releasedAt);
        left -= 1;
        releasedAt = performance.now();
        await lock.unlock();
      }
    }),
  );
  return gaps.sort((a, b) => a - b);
}

interface SlowlogEntry {
  call: string;
  micros: number;
}

/** The scripts run since the last SLOWLOG RESET, oldest first, named by their shape. */
async function slowlog(): Promise<SlowlogEntry[]> {
  const entries = (await admin.call('SLOWLOG', 'GET', '1000')) as [number, number, number, string[], string, string][];
  return entries
    .reverse()
    .filter(([, , , args]) => /^eval/i.test(args[0]!))
    .map(([, , micros, args]) => {
      // EVALSHA sha numkeys keys… args…: the number of keys and of arguments names the script.
      const shape = `${args[2]}:${args.length - 3 - Number(args[2])}`;
      const call = { '3:4': 'acquire', '4:4': 'release', '4:2': 'leave', '4:1': 'forceUnlock' }[shape] ?? shape;
      return { call, micros };
    });
}

const REPEATS = 15;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function queueCost(length: number): Promise<void> {
  const name = `cost-${length}`;
  const { queue } = lockKeys('bench', name);
  // Long timeouts: no check-in falls inside a measurement.
  const holder = client({ fairLockWaitTimeout: 600_000 }).getFairLock(name);
  const filler = client({ fairLockWaitTimeout: 600_000 });
  const newcomer = client({ fairLockWaitTimeout: 600_000 }).getFairLock(name);
  for (const locks of clients) await warmUp(locks);
  // The warm-up lock's subscriptions end after their linger: not inside a measurement.
  await sleep(SUBSCRIPTION_LINGER_MS + 200);
  await holder.lock();
  let granted = 0;
  const enqueue = (): void => {
    void filler
      .getFairLock(name)
      .lock()
      .then(() => (granted += 1), () => undefined);
  };
  for (let i = 0; i < length; i += 1) enqueue();
  await until(async () => (await admin.zcard(queue)) === length);
  await quiet();

  /**
   * Runs `op` twice under MONITOR, to list the commands sent (the first run subscribes to the
   * wake-up channel, the second finds it subscribed), then REPEATS times without it (MONITOR
   * slows every call inside a script) for the median SLOWLOG time of each script call.
   */
  const measure = async (label: string, op: (run: number) => Promise<unknown>, between?: () => Promise<void>): Promise<void> => {
    const times = new Map<string, number[]>();
    const commands: string[][] = [];
    for (let run = 0; run < REPEATS + 2; run += 1) {
      const recorder = run < 2 ? await CommandRecorder.start(server.url) : undefined;
      recorder?.reset();
      await admin.slowlog('RESET');
      await op(run);
      await sleep(50);
      if (recorder) {
        await recorder.stop();
        commands.push(
          recorder.commands
            .filter(([command]) => !/^(slowlog|monitor|info|client)$/i.test(command!))
            .map(([command]) => (/^eval/i.test(command!) ? 'script' : command!.toLowerCase())),
        );
      } else {
        const seen = new Map<string, number>();
        for (const { call, micros } of await slowlog()) {
          const nth = (seen.get(call) ?? 0) + 1;
          seen.set(call, nth);
          const key = nth > 1 ? `${call} #${nth}` : call;
          times.set(key, [...(times.get(key) ?? []), micros]);
        }
      }
      await between?.();
    }
    const [first, second] = commands as [string[], string[]];
    console.log(`  ${label}:`);
    console.log(`    commands, first run: ${first.length} (${first.join(', ')}); next: ${second.length} (${second.join(', ')})`);
    const medians = [...times].map(([key, values]) => `${key} ${median(values)}`);
    console.log(`    script time, median of ${REPEATS} runs, µs: ${medians.join('; ')}`);
  };

  console.log(`queue of ${length} waiting calls:`);
  await measure('a newcomer queues, re-checks, gives up after 30 ms', () => newcomer.tryLock(30));
  await measure(
    'one turn: the holder unlocks, the head gets the lock',
    async (run) => {
      await (run === 0 ? holder : filler.getFairLock(name)).unlock();
      await until(() => granted === run + 1);
    },
    async () => {
      // Back to `length` queued, outside the measurement.
      enqueue();
      await until(async () => (await admin.zcard(queue)) === length);
      await quiet();
    },
  );
  for (const locks of clients.splice(0)) await locks.close();
  for (const conn of connections.splice(1)) conn.disconnect();
  await admin.flushall();
}

try {
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.config('SET', 'slowlog-max-len', '1000');
  const gaps = await handOverGaps();
  const fmt = (ms: number): string => ms.toFixed(3);
  console.log(
    `hand-over gap, 10 queued waiters, ${gaps.length} hand-overs: ` +
      `p50 ${fmt(percentile(gaps, 0.5))} ms, p90 ${fmt(percentile(gaps, 0.9))} ms, ` +
      `p99 ${fmt(percentile(gaps, 0.99))} ms, max ${fmt(gaps.at(-1)!)} ms`,
  );
  for (const locks of clients.splice(0)) await locks.close();
  for (const conn of connections.splice(1)) conn.disconnect();
  await admin.flushall();
  for (const length of QUEUE_LENGTHS) await queueCost(length);
} finally {
  for (const locks of clients) await locks.close();
  for (const conn of connections) conn.disconnect();
  await server.stop();
}
