// Child process for the fair lock's multi-process tests:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/fair-worker.ts <url> <prefix> <fairLockWaitTimeout>
// Prints `ready` once connected. Each stdin line `lock <tag>` starts a waiting lock() on the fair
// lock 'shared'; once acquired, the holder takes the next number from a Redis counter (so the
// numbers are the global acquisition order), prints {"tag","position"} and unlocks.
// Exits once stdin is closed and every lock call is done.
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { LockClient } from '../../lib/index.js';

const [url, prefix, waitTimeout] = process.argv.slice(2);
if (!url || !prefix || !waitTimeout) throw new Error('usage: fair-worker <url> <prefix> <fairLockWaitTimeout>');

const redis = new Redis(url);
const locks = new LockClient(redis, { keyPrefix: prefix, fairLockWaitTimeout: Number(waitTimeout) });
const lock = locks.getFairLock('shared');
await redis.ping();
process.stdout.write('ready\n');

const calls: Promise<void>[] = [];
for await (const line of createInterface({ input: process.stdin })) {
  const [command, tag] = line.split(' ');
  if (command !== 'lock' || !tag) throw new Error(`unknown command: ${line}`);
  calls.push(
    (async () => {
      await lock.lock();
      try {
        const position = await redis.incr(`${prefix}:order`);
        process.stdout.write(`${JSON.stringify({ tag, position })}\n`);
      } finally {
        await lock.unlock();
      }
    })(),
  );
}
await Promise.all(calls);
await locks.close();
redis.disconnect();
