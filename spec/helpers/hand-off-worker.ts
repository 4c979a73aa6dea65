// Child process for the hand-off specs:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/hand-off-worker.ts <url> <prefix> <kind> <watchdogTimeout>
//   takes 'moved' in <kind> (lock, fair, fenced, read, write, permit) in watchdog mode, hands it
//   off, prints the handle as one JSON line, then idles (renewing nothing) until killed.
import { connectStandalone } from './clients.js';
import { LockClient } from '../../lib/index.js';
import { take, type MoveKind } from '../holding/kinds.js';

const [url, prefix, kind, watchdogTimeout] = process.argv.slice(2);
if (!url || !prefix || !kind || !watchdogTimeout) throw new Error('usage: hand-off-worker <url> <prefix> <kind> <watchdogTimeout>');

const { connection } = connectStandalone(url);
const locks = new LockClient(connection, { keyPrefix: prefix, watchdogTimeout: Number(watchdogTimeout) });
const held = await take(locks, kind as MoveKind, 'moved');
if (!held) throw new Error('hand-off-worker: the lock was taken');
process.stdout.write(`${JSON.stringify(await held.handOff())}\n`);
setInterval(() => undefined, 60_000);
