// Child process for the hand-off specs:
// node --import tsx --import ./tools/register-lua.mjs spec/helpers/hand-off-worker.ts <url> <prefix> <kind> <watchdogTimeout>
//   takes 'moved' in <kind> (lock, fair, fenced, read, write, permit) in watchdog mode, hands it
//   off, prints the handle as one JSON line, then idles (renewing nothing) until killed.
//   With <kind> 'adopt': prints 'ready', reads a handle (one JSON line) from stdin, adopts it at
//   once, prints 'won' or 'lost', releases after 300 ms, exits.
import { connectStandalone } from './clients.js';
import { LockClient, LockLostError, type LeaseHandle } from '../../lib/index.js';
import { take, type MoveKind } from '../holding/kinds.js';

const [url, prefix, kind, watchdogTimeout] = process.argv.slice(2);
if (!url || !prefix || !kind || !watchdogTimeout) throw new Error('usage: hand-off-worker <url> <prefix> <kind> <watchdogTimeout>');

const { connection, close } = connectStandalone(url);
const locks = new LockClient(connection, { keyPrefix: prefix, watchdogTimeout: Number(watchdogTimeout) });
if (kind === 'adopt') {
  await locks.getLock('warm-up').isLocked();
  process.stdout.write('ready\n');
  const line = await new Promise<string>((resolve) => process.stdin.once('data', (chunk: Buffer) => resolve(chunk.toString())));
  const handle = JSON.parse(line) as LeaseHandle;
  const adopted = await locks.adopt(handle).catch((error: unknown) => {
    if (!(error instanceof LockLostError)) throw error;
    return null;
  });
  process.stdout.write(`${adopted ? 'won' : 'lost'}\n`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await adopted?.release();
  await locks.close();
  await close();
  process.exit(0);
}
const held = await take(locks, kind as MoveKind, 'moved');
if (!held) throw new Error('hand-off-worker: the lock was taken');
process.stdout.write(`${JSON.stringify(await held.handOff())}\n`);
setInterval(() => undefined, 60_000);
