// What rlock/otel costs per lock/unlock cycle: rounds of uncontended tryLock + unlock on one
// connection, alternating three set-ups in one process so that the machine's load hits them
// alike: no subscriber (rlock's channels idle), rlock/otel with the OpenTelemetry SDK recording
// metrics only, then metrics and spans (see otel.ts), and no subscriber again. Reports the process
// CPU time (user + sys) and the wall time per cycle, medians over the rounds, and each set-up's
// ratio to the uninstrumented cycle.
// Then the telemetry alone, without Redis (whose socket writes dominate a loaded machine's noise):
// the messages one acquisition and its release publish, as rlock publishes them, with rlock/otel
// and the SDK subscribed, CPU time per acquisition.
// Run from the root after a build: node --import tsx bench/src/otel-cost.ts [cycles] [rounds]
import { channel, tracingChannel } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import { spawnRedis } from '../../tools/redis-server.js';
import { LockClient } from '../../dist/index.js';
import { startOtel } from './otel.js';
import { median } from './stats.js';

const cycles = Number(process.argv[2] ?? 3_000);
const rounds = Number(process.argv[3] ?? 7);
const server = await spawnRedis();
const redis = new Redis(server.url);
const locks = new LockClient(redis, { keyPrefix: 'otel-cost' });
const lock = locks.getLock('k');

async function round(): Promise<{ cpuUs: number; wallUs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < cycles; i += 1) {
    if (!(await lock.tryLock(1_000, 10_000))) throw new Error('not acquired');
    await lock.unlock();
  }
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / cycles, wallUs: ((performance.now() - started) * 1_000) / cycles };
}

type Mode = 'idle' | 'metrics' | 'otel';
const results: Record<Mode, { cpuUs: number[]; wallUs: number[] }> = { idle: { cpuUs: [], wallUs: [] }, metrics: { cpuUs: [], wallUs: [] }, otel: { cpuUs: [], wallUs: [] } };
const setUps: Record<Mode, (() => () => Promise<void>) | undefined> = { idle: undefined, metrics: () => startOtel({ traces: false }), otel: () => startOtel() };
try {
  await round(); // warm-up
  for (let r = 0; r < rounds; r += 1) {
    for (const mode of ['idle', 'metrics', 'otel', 'idle'] as const) {
      const stop = setUps[mode]?.();
      const { cpuUs, wallUs } = await round();
      await stop?.();
      results[mode].cpuUs.push(cpuUs);
      results[mode].wallUs.push(wallUs);
    }
  }
  const idle = { cpu: median(results.idle.cpuUs), wall: median(results.idle.wallUs) };
  const metricsOnly = { cpu: median(results.metrics.cpuUs), wall: median(results.metrics.wallUs) };
  const otel = { cpu: median(results.otel.cpuUs), wall: median(results.otel.wallUs) };
  const vs = (m: { cpu: number; wall: number }): string => `(${(m.cpu / idle.cpu).toFixed(2)} × CPU, ${(m.wall / idle.wall).toFixed(2)} × wall)`;
  console.log(`${rounds} rounds x ${cycles} tryLock+unlock cycles, medians per cycle:`);
  console.log(`  no subscriber:        CPU ${idle.cpu.toFixed(1)} µs, wall ${idle.wall.toFixed(1)} µs`);
  console.log(`  metrics only:         CPU ${metricsOnly.cpu.toFixed(1)} µs, wall ${metricsOnly.wall.toFixed(1)} µs ${vs(metricsOnly)}`);
  console.log(`  metrics and spans:    CPU ${otel.cpu.toFixed(1)} µs, wall ${otel.wall.toFixed(1)} µs ${vs(otel)}`);
  console.log('telemetry alone (no Redis), CPU per acquisition + release, median of 5 x 20,000:');
  for (const [label, signals] of [
    ['metrics and spans', {}],
    ['metrics only', { traces: false }],
    ['spans only', { metrics: false }],
  ] as const) {
    const runs = Array.from({ length: 5 }, () => telemetryAlone(signals));
    console.log(`  ${label.padEnd(18)} ${median(runs).toFixed(2)} µs`);
  }
} finally {
  await locks.close();
  redis.disconnect();
  await server.stop();
}

/** CPU µs per acquisition of the telemetry alone: the messages rlock publishes, rlock/otel and the SDK handling them. */
function telemetryAlone(signals: { metrics?: boolean; traces?: boolean }): number {
  const acquire = tracingChannel('rlock:acquire');
  const release = tracingChannel('rlock:release');
  const holdStart = channel('rlock:hold:start');
  const holdEnd = channel('rlock:hold:end');
  const n = 20_000;
  const stop = startOtel(signals);
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i += 1) {
    const base = { name: 'k', owner: `c:${i}`, clientId: 'c', kind: 'lock' };
    const context = { ...base, server: '127.0.0.1:6379', permits: undefined, outcome: 'acquired', waitMs: 0.2, attempts: 1 };
    acquire.start.publish(context);
    acquire.end.publish(context);
    acquire.asyncStart.publish(context);
    acquire.asyncEnd.publish(context);
    holdStart.publish({ ...base, permits: 1 });
    const releasing = { ...base, server: '127.0.0.1:6379' };
    release.start.publish(releasing);
    release.end.publish(releasing);
    holdEnd.publish({ ...base, permits: 1, heldMs: 0.1, reason: 'released' });
    release.asyncStart.publish(releasing);
    release.asyncEnd.publish(releasing);
  }
  const used = process.cpuUsage(cpu);
  void stop();
  return (used.user + used.system) / n;
}
