// A development probe of the uncontended cycle (not the benchmark: bench/ measures speed). One
// task locks and unlocks one key back to back, per call style, on a redis-server of its own;
// prints p50 per cycle and Redis' own cost (commandstats). `--only=tryLock --cycles=N` runs one
// style, e.g. under `node --cpu-prof`. `--tasks=N` runs N tasks at once, each on its own key
// (cycles per task), and also prints this process's CPU per cycle (`process.cpuUsage`). `--alloc`
// also prints the heap bytes allocated per cycle (V8's sampling heap profiler, collected objects
// included): a figure the machine's load does not blur; `--sites=N` with it lists the top N
// allocation sites of the last round (by function, and by the nearest rlock frame above it).
//   node --import tsx --import ./tools/register-lua.mjs tools/cycle-bench.ts [--only=tryLock] [--cycles=20000] [--tasks=100] [--dist]
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { spawnRedis } from './redis-server.js';

const { values } = parseArgs({ options: { detail: { type: 'boolean' }, only: { type: 'string' }, cycles: { type: 'string' }, rounds: { type: 'string' }, tasks: { type: 'string' }, alloc: { type: 'boolean' }, sites: { type: 'string' }, dist: { type: 'boolean' } } });
// `--dist`: the build (npm run build), as the benchmark runs it, instead of the sources through tsx (whose
// keep-names helper allocates on every closure).
const { LockClient } = (await import(values.dist ? '../dist/index.js' : '../lib/index.js')) as typeof import('../lib/index.js');
const CYCLES = Number(values.cycles ?? 5_000);
const ROUNDS = Number(values.rounds ?? 3);
const TASKS = Number(values.tasks ?? 1);
const ACQUIRE = (await import('../lib/scripts/acquire-2.lua')).default as { lua: string };
const RELEASE = (await import('../lib/scripts/release-2.lua')).default as { lua: string };
const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

const server = await spawnRedis();
const redis = new Redis(server.url);
const admin = new Redis(server.url);
const client = new LockClient(redis, { keyPrefix: 'probe' });
const sha = (await redis.script('LOAD', COMPARE_AND_DELETE)) as string;
const acquireSha = (await redis.script('LOAD', ACQUIRE.lua)) as string;
const releaseSha = (await redis.script('LOAD', RELEASE.lua)) as string;
const prefix = Math.random().toString(36).slice(2);
let counter = 0;

const styles: Record<string, (key: string) => Promise<void>> = {
  raw: async (key) => {
    const token = `${prefix}${(counter += 1)}`;
    if ((await redis.set(key, token, 'PX', 10_000, 'NX')) === 'OK') await redis.evalsha(sha, 1, key, token);
  },
  // rlock's two scripts alone, as ioredis' evalsha sends them: the protocol's floor, no lock machinery.
  scripts: async (key) => {
    const call = (counter += 2);
    const owner = `${prefix}:${call}`;
    const lock = `{${key}}`;
    // Request ids as the client's window numbers them (request-window.ts): one call in use at a time.
    if ((await redis.evalsha(acquireSha, 2, lock, `${lock}:w`, owner, 10_000, '', '0', `${call.toString(36)}/0`)) === null) {
      await redis.evalsha(releaseSha, 2, lock, `${lock}:w`, owner, 0, `${(call + 1).toString(36)}/0`, 'publish', 11_000);
    }
  },
  tryLock: async (key) => {
    const lock = client.getLock(key);
    if (await lock.tryLock(10_000, 10_000)) await lock.unlock();
  },
  tryLockNow: async (key) => {
    const lock = client.getLock(key);
    if (await lock.tryLock(0, 10_000)) await lock.unlock();
  },
  acquire: async (key) => {
    const lease = await client.getLock(key).acquire({ waitTime: 10_000, leaseTime: 10_000 });
    await lease.release();
  },
  withLock: async (key) => {
    await client.getLock(key).withLock(() => undefined, { waitTime: 10_000, leaseTime: 10_000 });
  },
};

/** Commands run (those from scripts too), and the time of the top-level ones, µs (script time includes its commands). */
async function commandStats(raw: boolean): Promise<{ calls: number; usec: number; cpu: number }> {
  const info = await admin.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    const command = match[1]!;
    if (command === 'info' || command === 'config') continue;
    calls += Number(match[2]);
    if (command.startsWith('eval') || (raw && command === 'set')) usec += Number(match[3]);
  }
  const cpu = /used_cpu_user:([\d.]+)/.exec(await admin.info('cpu'))!;
  const sys = /used_cpu_sys:([\d.]+)/.exec(await admin.info('cpu'))!;
  return { calls, usec, cpu: (Number(cpu[1]) + Number(sys[1])) * 1e6 };
}

const picked = values.only ? values.only.split(',') : Object.keys(styles);
const results = new Map<string, { p50: number[]; usec: number[]; calls: number[]; cpu: number[]; client: number[]; alloc: number[] }>();
const profiler = new Session();
if (values.alloc) profiler.connect();

interface SamplingNode {
  selfSize: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: SamplingNode[];
}
/** Bytes of every sampled allocation under `node`. */
const allocatedBytes = (node: SamplingNode): number => node.children.reduce((sum, child) => sum + allocatedBytes(child), node.selfSize);
/** A frame as `function file:line`, the path from the package's folder on. */
const frameName = (frame: SamplingNode['callFrame']): string =>
  `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|lib|tools)\//, '$1/')}:${frame.lineNumber + 1}`;

/** The top allocation sites of a sampling profile, bytes per cycle: by function, and by the nearest rlock (lib/) frame. */
function printSites(style: string, head: SamplingNode, count: number, cycles: number): void {
  const own = new Map<string, number>();
  const byLib = new Map<string, number>();
  const walk = (node: SamplingNode, lib: string): void => {
    const name = frameName(node.callFrame);
    const libFrame = /\/(lib|dist)\//.test(node.callFrame.url) ? name : lib;
    if (node.selfSize > 0) {
      own.set(name, (own.get(name) ?? 0) + node.selfSize);
      byLib.set(libFrame, (byLib.get(libFrame) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, libFrame);
  };
  walk(head, '(outside lib/)');
  const where = new Map<string, number>();
  const placeOf = (url: string): string =>
    url.includes('/node_modules/') ? 'the Redis client' : /\/(lib|dist)\//.test(url) ? 'rlock (lib/)' : url.includes('/tools/') ? 'the probe' : 'Node and V8';
  const sum = (node: SamplingNode): void => {
    const place = placeOf(node.callFrame.url);
    where.set(place, (where.get(place) ?? 0) + node.selfSize);
    for (const child of node.children) sum(child);
  };
  sum(head);
  console.log(`${style}: ${[...where].map(([place, bytes]) => `${place} ${(bytes / cycles).toFixed(0)} B`).join(', ')} per cycle`);
  for (const [title, sites] of [['allocating function', own], ['nearest lib/ frame', byLib]] as const) {
    console.log(`${style}: top ${count} by ${title}, bytes per cycle`);
    for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, count)) console.log(`  ${(bytes / cycles).toFixed(0).padStart(6)}  ${site}`);
  }
}

try {
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const name of picked) {
      const run = styles[name];
      if (!run) throw new Error(`unknown style ${name}`);
      const key = `probe:${name}:${round}`;
      for (let i = 0; i < 200; i += 1) await run(key);
      await admin.config('RESETSTAT');
      const before = await commandStats(name === 'raw');
      const samples: number[] = [];
      const entry = results.get(name) ?? { p50: [], usec: [], calls: [], cpu: [], client: [], alloc: [] };
      const cpuBefore = process.cpuUsage();
      if (values.alloc) await profiler.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      await Promise.all(
        Array.from({ length: TASKS }, async (_, task) => {
          const taskKey = TASKS === 1 ? key : `${key}:${task}`;
          for (let i = 0; i < CYCLES; i += 1) {
            const start = performance.now();
            await run(taskKey);
            samples.push(performance.now() - start);
          }
        }),
      );
      const cpuUsed = process.cpuUsage(cpuBefore);
      if (values.alloc) {
        const { profile } = await profiler.post('HeapProfiler.stopSampling');
        entry.alloc.push(allocatedBytes(profile.head) / (CYCLES * TASKS));
        if (values.sites && round === ROUNDS - 1) printSites(name, profile.head, Number(values.sites), CYCLES * TASKS);
      }
      const after = await commandStats(name === 'raw');
      if (values.detail) console.log(name, (await admin.info('commandstats')).replace(/,rejected_calls=0,failed_calls=0/g, ''));
      samples.sort((a, b) => a - b);
      entry.p50.push(samples[Math.floor(samples.length / 2)]! * 1000);
      entry.usec.push((after.usec - before.usec) / (CYCLES * TASKS));
      entry.calls.push((after.calls - before.calls) / (CYCLES * TASKS));
      entry.cpu.push((after.cpu - before.cpu) / (CYCLES * TASKS));
      entry.client.push((cpuUsed.user + cpuUsed.system) / (CYCLES * TASKS));
      results.set(name, entry);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rawP50 = results.get('raw') ? median(results.get('raw')!.p50) : undefined;
  for (const [name, r] of results) {
    const ratio = rawP50 ? ` (${(median(r.p50) / rawP50).toFixed(2)}x raw)` : '';
    console.log(
      `${name.padEnd(11)} p50 ${median(r.p50).toFixed(1)} µs${ratio}; client CPU ${median(r.client).toFixed(1)} µs/cycle${values.alloc ? `, ${(median(r.alloc) / 1024).toFixed(1)} KB allocated/cycle` : ''}; Redis CPU ${median(r.cpu).toFixed(0)} µs/cycle, commandstats ${median(r.usec).toFixed(1)} µs/cycle, ${median(r.calls).toFixed(1)} commands/cycle`,
    );
  }
} finally {
  await client.close();
  redis.disconnect();
  admin.disconnect();
  await server.stop();
}
