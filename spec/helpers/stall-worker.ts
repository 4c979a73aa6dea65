// Child process for the renewal-thread specs (spec/renewal-thread/renewal-thread.spec.ts):
// node <bundle of this file> <family> <url> <prefix> <leaseMs> <maxStallMs> <blockMs> <mode> <worker> <connect> <readyKey>
// Holds lock `stall` with a renewal thread (<worker>: the thread's program, <connect>: its connect
// module, which sets <readyKey> once connected), prints `blocking` and blocks its event loop for <blockMs>, then prints one JSON line:
// what it saw on resuming. Modes: `hold` (holds through the block), `released` (its release is
// called just before the block), `killed` (prints `held` and waits to be killed), `idle` (releases,
// closes its connection without locks.close(), prints `quit` and should exit by itself).
import { Redis } from 'ioredis';
import { LockClient, type LockLostInfo } from '../../lib/index.js';
import { useRenewalWorkerScript } from '../../lib/renewal-thread/worker-script.js';
import { connectStandalone, type TestClient } from './clients.js';

const [family, url, prefix, leaseMs, maxStallMs, blockMs, mode, worker, connect, readyKey] = process.argv.slice(2);
if (!family || !url || !prefix || !leaseMs || !maxStallMs || !blockMs || !mode || !worker || !connect || !readyKey) {
  throw new Error('usage: stall-worker <family> <url> <prefix> <leaseMs> <maxStallMs> <blockMs> <mode> <worker> <connect> <readyKey>');
}

useRenewalWorkerScript(new URL(worker));
const { connection, close } = connectStandalone(url, {}, family as TestClient);
const locks = new LockClient(connection, { keyPrefix: prefix, watchdogTimeout: Number(leaseMs), renewalThread: { connect, maxStall: Number(maxStallMs) } });
const lost: LockLostInfo[] = [];
locks.on('lost', (info) => lost.push(info));
locks.on('error', (error) => process.stderr.write(`error: ${(error as Error).message}\n`));
const lock = locks.getLock('stall');
const lease = await lock.acquire();
// Once the thread is connected it renews (at once, then every third of the lease).
const look = new Redis(url);
for (let i = 0; i < 500 && (await look.exists(readyKey)) === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
look.disconnect();
if (mode === 'idle') {
  await lease.release();
  await close();
  process.stdout.write('quit\n');
} else if (mode === 'killed') {
  process.stdout.write('held\n');
  await new Promise(() => undefined);
} else {
  if (mode === 'released') void lease.release().catch(() => undefined);
  process.stdout.write(`blocking\n`);
  const end = performance.now() + Number(blockMs);
  while (performance.now() < end) {
    // a long synchronous step
  }
  // The first thing of rlock's that runs for the hold: a query.
  const held = await lock.isHeldByCurrentOwner();
  process.stdout.write(`${JSON.stringify({ held, lost: lost.map((info) => info.reason), aborted: lease.signal.aborted, reason: (lease.signal.reason as { reason?: string } | undefined)?.reason })}\n`);
  if (mode === 'hold' && held) await lease.release();
  await locks.close();
  await close();
}
