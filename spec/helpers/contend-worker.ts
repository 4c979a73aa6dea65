// Child process for the multi-process exclusion test:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/contend-worker.ts <url> <prefix> <tasks> <rounds> [fair]
// Contends for the lock 'shared' (the fair lock of that name with `fair`).
// Prints one JSON line: the ContendResult.
import { Redis } from 'ioredis';
import { LockClient } from '../../lib/index.js';
import { connectStandalone } from './clients.js';
import { contend } from './contend.js';

const [url, prefix, tasks, rounds, kind] = process.argv.slice(2);
if (!url || !prefix || !tasks || !rounds) throw new Error('usage: contend-worker <url> <prefix> <tasks> <rounds>');

// The locks on the client family under test (RLOCK_TEST_CLIENT is inherited); the probe on ioredis.
const { connection: redis, close } = connectStandalone(url);
const probe = new Redis(url);
const locks = new LockClient(redis, { keyPrefix: prefix });
const lock = kind === 'fair' ? locks.getFairLock('shared') : locks.getLock('shared');
const result = await contend(() => lock, probe, `${prefix}:probe`, Number(tasks), Number(rounds));
process.stdout.write(`${JSON.stringify(result)}\n`);
await locks.close();
await close();
probe.disconnect();
