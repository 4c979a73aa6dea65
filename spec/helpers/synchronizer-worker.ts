// Child process for the semaphore and latch multi-process specs:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/synchronizer-worker.ts <url> <prefix> <mode> ...
//   contend <tasks> <rounds> <limit> [fair]: tasks × rounds of withPermit on semaphore 'shared'
//     (request sizes 1..2); inside, INCRBY a Redis counter by the request and expect ≤ limit.
//     Prints one JSON line { entries, violations, maxInside }.
//   hold <limit> <count> <watchdogTimeout>: takes <count> permits in watchdog mode, prints
//     `held`, then idles until killed.
//   latch <waiters>: starts <waiters> waits on latch 'gate', prints `waiting` once each is
//     registered, and one JSON line { opened } when all returned.
import { Redis } from 'ioredis';
import { connectStandalone } from './clients.js';
import { LockClient } from '../../lib/index.js';

const [url, prefix, mode, ...args] = process.argv.slice(2);
if (!url || !prefix || !mode) throw new Error('usage: synchronizer-worker <url> <prefix> <mode> ...');

// The synchronizers on the client family under test (RLOCK_TEST_CLIENT is inherited); the probe on ioredis.
const { connection: redis, close } = connectStandalone(url);
const probe = new Redis(url);

async function contend(tasks: number, rounds: number, limit: number, fair: boolean): Promise<void> {
  const locks = new LockClient(redis, { keyPrefix: prefix });
  const sem = locks.getSemaphore('shared', { permits: limit, fair });
  const result = { entries: 0, violations: 0, maxInside: 0 };
  const key = `${prefix}:inside`;
  await Promise.all(
    Array.from({ length: tasks }, async (_, task) => {
      const need = (task % 2) + 1;
      for (let round = 0; round < rounds; round += 1) {
        await sem.withPermit(
          async () => {
            const inside = await probe.incrby(key, need);
            if (inside > limit) result.violations += 1;
            result.maxInside = Math.max(result.maxInside, inside);
            await new Promise((resolve) => setImmediate(resolve));
            await probe.decrby(key, need);
            result.entries += 1;
          },
          { permits: need, waitTime: 60_000 },
        );
      }
    }),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await locks.close();
}

async function hold(limit: number, count: number, watchdogTimeout: number): Promise<void> {
  const locks = new LockClient(redis, { keyPrefix: prefix, watchdogTimeout });
  await locks.getSemaphore('shared', { permits: limit }).acquire({ permits: count });
  process.stdout.write('held\n');
  await new Promise(() => setInterval(() => undefined, 1_000));
}

async function latch(waiters: number): Promise<void> {
  const locks = new LockClient(redis, { keyPrefix: prefix });
  const gate = locks.getCountDownLatch('gate');
  const waits = Array.from({ length: waiters }, () => gate.wait({ waitTime: 20_000 }));
  // Registered in Redis once the waiter set lists this client.
  for (let i = 0; i < 1_000 && (await probe.zscore(`{${prefix}:gate}:latch:waiters`, locks.id)) === null; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  process.stdout.write('waiting\n');
  const opened = (await Promise.all(waits)).filter(Boolean).length;
  process.stdout.write(`${JSON.stringify({ opened })}\n`);
  await locks.close();
}

if (mode === 'contend') await contend(Number(args[0]), Number(args[1]), Number(args[2]), args[3] === 'fair');
else if (mode === 'hold') await hold(Number(args[0]), Number(args[1]), Number(args[2]));
else if (mode === 'latch') await latch(Number(args[0]));
else throw new Error(`unknown mode ${mode}`);
await close();
probe.disconnect();
