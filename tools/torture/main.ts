// npm run torture -- [--seed N] [--seconds S] [--kinds lock,fair,rw,fenced,multi,redlock,election] [--processes P] [--client ioredis|node-redis|iovalkey]
// The parent: spawns the servers, the fault proxies and the workers (tools/torture/faults.ts),
// injects the seeded schedule, checks what the workers report (checker.ts) and prints the
// report (report.ts). Exit code 1 on any violation. See docs/torture.md.
import { randomInt } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { parseArgs, type Kind } from './args.js';
import { Checker, serversOf, type Violation } from './checker.js';
import { now } from './events.js';
import { Rig, serversFor, type FaultRecord } from './faults.js';
import { bundleRenewal } from './renewal.js';
import { report } from './report.js';
import { makeSchedule, TIMING, type ServerId } from './schedule.js';

/** How long the end of the run waits for keys with a TTL to go, ms (a wide burst's long lease included). */
const SETTLE_MS = TIMING.longLeaseMax + TIMING.fairLockWaitTimeout + 6_000;

let args;
try {
  args = parseArgs(process.argv.slice(2), () => randomInt(2 ** 32));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
}
const keyPrefix = `torture-${args.seed}`;
const schedule = makeSchedule(args.seed, {
  seconds: args.seconds,
  processes: args.processes,
  clients: args.clients,
  servers: serversFor(args.kinds),
});

const admins = new Map<ServerId, Redis>();
const lockKey = (name: string): string => `{${keyPrefix}:${name}}`;

/** Does `owner` still hold `name` on any of its kind's servers? What they have, if so (see HeldProbe). */
async function stillHeld(kind: Kind, name: string, owner: string): Promise<string | false | undefined> {
  try {
    const answers = await Promise.all(
      serversOf(kind).map(async (id) => {
        const admin = admins.get(id)!;
        const key = kind === 'election' ? `${lockKey(name)}:election` : lockKey(name);
        let held: boolean;
        if (kind === 'semaphore') return await semaphoreHeld(admin, `${key}:semaphore`, owner);
        if (kind !== 'rw') held = (await admin.hexists(key, owner)) === 1;
        else {
          // A read-write lock keeps a dead holder's fields until pruned: held means its lease has not ended.
          const [[writer, wuntil], score, [seconds, micros]] = await Promise.all([
            admin.hmget(key, 'writer', 'wuntil'),
            admin.zscore(`${key}:readers`, owner),
            admin.time(),
          ]);
          const serverMs = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
          held = (writer === owner && Number(wuntil) > serverMs) || (score !== null && Number(score) > serverMs);
        }
        if (!held) return undefined;
        const [fields, pttl] = await Promise.all([admin.hgetall(key), admin.pttl(key)]);
        return `server ${id} has ${JSON.stringify(fields)} pttl ${pttl}`;
      }),
    );
    const held = answers.filter((answer) => answer !== undefined);
    return held.length > 0 ? held.join('; ') : false;
  } catch {
    return undefined;
  }
}

/** How many holds `owner` has of a plain, fair or fenced lock (its hash field), asked at once; undefined if Redis could not be asked. */
async function holdCount(kind: Kind, name: string, owner: string): Promise<number | undefined> {
  try {
    const count = await admins.get(serversOf(kind)[0]!)!.hget(lockKey(name), owner);
    return count === null ? 0 : Number(count);
  } catch {
    return undefined;
  }
}

/** A permit is held while its member's lease has not ended (a dead holder's member stays until pruned). */
async function semaphoreHeld(admin: Redis, key: string, owner: string): Promise<string | undefined> {
  const [score, [seconds, micros]] = await Promise.all([admin.zscore(key, owner), admin.time()]);
  const serverMs = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
  if (score === null || Number(score) <= serverMs) return undefined;
  return `${key} has ${owner} until ${Number(score) - serverMs} ms from now`;
}

/** Keys left under the run's prefix that should not be there: everything but token counters, and records and process identities with a TTL. */
async function leftoverKeys(): Promise<string[]> {
  const left: string[] = [];
  for (const [id, admin] of admins) {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `{${keyPrefix}:*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        if (key.endsWith('}:token') || key.endsWith('}:election:epoch')) continue;
        const ttl = await admin.pttl(key);
        if (ttl === -2) continue;
        if (key.includes('}:rec:') && ttl > 0) continue;
        // A client's process identity: deleted by close(), a killed worker's ends with its TTL.
        if (key.includes('}:client:') && ttl > 0) continue;
        left.push(`${key} on server ${id} (${await admin.type(key)}, pttl ${ttl})`);
      }
    } while (cursor !== '0');
  }
  return left;
}

const log: FaultRecord[] = [];
const checker = new Checker(stillHeld, log, holdCount);
// The renewal threads' program and connect module, bundled from the sources (renewal.ts).
const renewal = await bundleRenewal();
const rig = new Rig({
  log,
  seed: args.seed,
  kinds: args.kinds,
  processes: args.processes,
  clients: args.clients,
  client: args.client,
  actorsPerClient: 2,
  keyPrefix,
  onEvent: (event) => checker.add(event),
  onExit: (worker, incarnation, t, killed) => checker.workerGone(worker, incarnation, t, killed ? 'killed' : 'exit'),
  renewal: { worker: renewal.worker, connect: renewal.connect },
  threads: args.threads,
});

let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
});

const timers: NodeJS.Timeout[] = [];
let exitCode = 1;
try {
  await rig.start();
  for (const [id, server] of rig.servers) {
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 200 });
    admin.on('error', () => undefined);
    admins.set(id, admin);
  }
  const origin = now();
  for (const fault of schedule) timers.push(setTimeout(() => void rig.inject(fault), fault.at));
  const end = origin + args.seconds * 1_000;
  while (now() < end && !interrupted) await sleep(Math.min(250, end - now()));
  for (const timer of timers) clearTimeout(timer);
  checker.stopping();
  await rig.quiesce();
  await rig.stopWorkers(20_000);
  await checker.drainProbes();

  const extra: Violation[] = rig.crashes.map((message) => ({ kind: 'worker', message }));
  let left = await leftoverKeys();
  const settleBy = Date.now() + SETTLE_MS;
  while (left.length > 0 && Date.now() < settleBy) {
    await sleep(250);
    left = await leftoverKeys();
  }
  for (const key of left) extra.push({ kind: 'leftover-key', message: `key left ${SETTLE_MS} ms after the run: ${key}` });
  checker.finish(rig.log);
  let eventsFile: string | undefined;
  if (checker.violations.length + extra.length > 0) {
    // Every event, one JSON line each (with its worker), for a look beyond the report's traces.
    eventsFile = join(tmpdir(), `torture-${args.seed}-${process.pid}-events.jsonl`);
    await writeFile(eventsFile, checker.events.map((e) => JSON.stringify({ ...e, at: e.event.t - origin })).join('\n') + '\n');
  }
  exitCode = report(args, checker, rig.log, origin, extra, eventsFile, rig.setups);
  if (interrupted) exitCode = 1;
} finally {
  for (const timer of timers) clearTimeout(timer);
  for (const admin of admins.values()) admin.disconnect();
  await rig.close();
  await renewal.remove();
}
process.exit(exitCode);
