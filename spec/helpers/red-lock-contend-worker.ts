// Child process for the multi-process RedLock exclusion test:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/red-lock-contend-worker.ts <prefix> <tasks> <rounds> <url>...
// One LockClient per url (one per node), one RedLock over them. Prints one JSON line: the ContendResult.
import { Redis } from 'ioredis';
import { connectStandalone } from './clients.js';
import { LockClient, RedLock } from '../../lib/index.js';
import { contend } from './contend.js';

const [prefix, tasks, rounds, ...urls] = process.argv.slice(2);
if (!prefix || !tasks || !rounds || urls.length === 0) {
  throw new Error('usage: red-lock-contend-worker <prefix> <tasks> <rounds> <url>...');
}

// The locks on the client family under test (RLOCK_TEST_CLIENT is inherited); the probe on ioredis.
const connections = urls.map((url) => connectStandalone(url));
const clients = connections.map(({ connection }) => new LockClient(connection, { keyPrefix: prefix }));
const redLock = new RedLock(...clients.map((client) => client.getLock('shared')));
const probe = new Redis(urls[0]!);
const result = await contend(() => redLock, probe, `${prefix}:probe`, Number(tasks), Number(rounds));
process.stdout.write(`${JSON.stringify(result)}\n`);
for (const client of clients) await client.close();
for (const { close } of connections) await close();
probe.disconnect();
