// Child process for the leadership specs across processes:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/leadership-worker.ts <url> <prefix> <mode> ...
//   lead <watchdogTimeout> <value>: campaigns for election 'e', prints `leading <epoch>`, then idles
//     until killed.
//   observe <count>: observes election 'e', prints `ready` once the current state came, then each
//     change as one JSON line, and exits after <count> changes (the current state not counted).
//   run: prints `ready` once connected, and on a line `go` on stdin makes one runExclusive of
//     'job' (atMostFor 10 s; the body INCRs <prefix>:runs and takes 1.5 s); prints { ran }.
import { Redis } from 'ioredis';
import { connectStandalone } from './clients.js';
import { LockClient } from '../../lib/index.js';

const [url, prefix, mode, ...args] = process.argv.slice(2);
if (!url || !prefix || !mode) throw new Error('usage: leadership-worker <url> <prefix> <mode> ...');

// The client family under test (RLOCK_TEST_CLIENT is inherited); the probe on ioredis.
const { connection: redis, close } = connectStandalone(url);
const print = (line: string): void => void process.stdout.write(`${line}\n`);

async function lead(watchdogTimeout: number, value: string): Promise<void> {
  const locks = new LockClient(redis, { keyPrefix: prefix, watchdogTimeout });
  const leadership = await locks.getElection('e').campaign({ value });
  print(`leading ${leadership.epoch}`);
  await new Promise(() => setInterval(() => undefined, 1_000));
}

async function observe(count: number): Promise<void> {
  const locks = new LockClient(redis, { keyPrefix: prefix });
  let seen = -1;
  for await (const leader of locks.getElection('e').observe()) {
    if (seen === -1) print('ready');
    else print(JSON.stringify(leader));
    seen += 1;
    if (seen === count) break;
  }
  await locks.close();
}

async function run(): Promise<void> {
  const locks = new LockClient(redis, { keyPrefix: prefix });
  const probe = new Redis(url!);
  await locks.runExclusive('warm-up', () => undefined, { atMostFor: 1_000 }); // connected, scripts loaded
  await probe.ping();
  const go = new Promise((resolve) => process.stdin.once('data', resolve));
  print('ready');
  await go;
  process.stdin.pause();
  const result = await locks.runExclusive(
    'job',
    async () => {
      await probe.incr(`${prefix}:runs`);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    },
    { atMostFor: 10_000 },
  );
  print(JSON.stringify({ ran: result.ran }));
  probe.disconnect();
  await locks.close();
}

if (mode === 'lead') await lead(Number(args[0]), args[1] ?? '');
else if (mode === 'observe') await observe(Number(args[0]));
else if (mode === 'run') await run();
else throw new Error(`unknown mode ${mode}`);
await close();
