// RedLock demo: one lock over five independent Redis masters, while some of them fail.
// Run: node --import tsx --import ./tools/register-lua.mjs examples/redlock.ts
// (starts five redis-servers from PATH on free loopback ports, and stops them at the end).
import { Redis } from 'ioredis';
import { LockClient, RedLock, type LockLostInfo } from 'rlock';
import { spawnRedis } from '../tools/redis-server.js';

const masters = await Promise.all(Array.from({ length: 5 }, () => spawnRedis()));
const connections: Redis[] = [];
const instance = (): LockClient[] =>
  masters.map((master) => {
    // Give up on a command after one retry while its master is down; the RedLock moves on anyway.
    const redis = new Redis(master.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    redis.on('error', () => undefined);
    connections.push(redis);
    return new LockClient(redis, { watchdogTimeout: 1_500 });
  });
const [serviceA, serviceB] = [instance(), instance()];
const redLockOf = (clients: LockClient[]): RedLock => new RedLock(...clients.map((locks) => locks.getLock('billing-run')));
const a = redLockOf(serviceA);
const b = redLockOf(serviceB);

// 1. Mutual exclusion across two services, each with its own five clients.
const gotA = await a.tryLock(0, 10_000);
const gotB = await b.tryLock(0, 10_000);
console.log(`1. A acquired=${gotA}, B acquired=${gotB}: ${b.lastFailure?.message}`);
await a.unlock();

// 2. Two masters frozen (SIGSTOP): the three healthy ones are a majority, so nothing waits for them.
masters[3]!.signal('SIGSTOP');
masters[4]!.signal('SIGSTOP');
let started = performance.now();
const gotFrozen = await b.tryLock(0, 10_000);
console.log(`2. two masters frozen: acquired=${gotFrozen} in ${(performance.now() - started).toFixed(1)} ms`);
await b.unlock();
masters[3]!.signal('SIGCONT');
masters[4]!.signal('SIGCONT');

// 3. Three masters down: no majority. tryLock gives up within its wait and says why.
await Promise.all([masters[2]!.stop(), masters[3]!.stop(), masters[4]!.stop()]);
started = performance.now();
const gotDown = await a.tryLock(300, 10_000);
console.log(`3. three masters down: acquired=${gotDown} after ${Math.round(performance.now() - started)} ms`);
console.log(`   ${a.lastFailure?.message.slice(0, 160)}…`);
await Promise.all([masters[2]!.start(), masters[3]!.start(), masters[4]!.start()]);

// 4. Watchdog mode: renewed on every master; losing the majority is told through the lease.
const lost = new Promise<LockLostInfo>((resolve) => serviceA[0]!.once('lost', resolve));
const lease = await a.acquire({ waitTime: 2_000 });
for (const master of masters.slice(2)) master.signal('SIGSTOP');
const info = await lost;
console.log(`4. majority frozen while held: lost (${info.reason}), lease.signal.aborted=${lease.signal.aborted}`);
for (const master of masters.slice(2)) master.signal('SIGCONT');
await lease.release();

for (const locks of [...serviceA, ...serviceB]) await locks.close();
for (const redis of connections) redis.disconnect();
await Promise.all(masters.map((master) => master.stop()));
if (!gotA || gotB || !gotFrozen || gotDown || info.reason !== 'quorum') process.exit(1);
