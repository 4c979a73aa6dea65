// Child process for the RedLock hand-off spec:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/redlock-hand-off-worker.ts <url,url,…> <prefix> <watchdogTimeout>
//   takes RedLock 'moved' over one LockClient per url in watchdog mode, hands it off, prints the
//   handle as one JSON line, then idles (renewing nothing) until killed.
import { connectStandalone } from './clients.js';
import { LockClient, RedLock } from '../../lib/index.js';

const [urls, prefix, watchdogTimeout] = process.argv.slice(2);
if (!urls || !prefix || !watchdogTimeout) throw new Error('usage: redlock-hand-off-worker <url,url,…> <prefix> <watchdogTimeout>');

const clients = urls.split(',').map((url) => new LockClient(connectStandalone(url).connection, { keyPrefix: prefix, watchdogTimeout: Number(watchdogTimeout) }));
const red = new RedLock(...clients.map((client) => client.getLock('moved')), { nodeTimeout: 1_000 });
const lease = await red.acquire({ waitTime: 0 });
process.stdout.write(`${JSON.stringify(await lease.handOff())}\n`);
setInterval(() => undefined, 60_000);
