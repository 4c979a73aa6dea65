// Leader election: three replicas campaign for one election; one leads at a time, the others
// wait and take over at once when it resigns, or within `watchdogTimeout` when it dies. An
// observer sees every change; each leader's epoch fences what it writes.
// Run: npm run example:leader
// (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from PATH started on a free port.)
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockClient, type Leadership } from 'rlock';
import { findRedis } from '../tools/find-redis.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const found = await findRedis();
const keyPrefix = `example-${randomUUID().slice(0, 8)}`;
const connections: Redis[] = [];
/** A LockClient on a connection of its own: each stands for one replica's process. */
const replica = (): LockClient => {
  const redis = new Redis(found.url);
  connections.push(redis);
  // A short watchdogTimeout so that the dead leader below is succeeded quickly (default 30 s).
  return new LockClient(redis, { keyPrefix, watchdogTimeout: 2_000 });
};

// --- An observer: the current leader, then every change, pushed over pub/sub -------------------
const observer = replica();
const stopObserving = new AbortController();
const seen: string[] = [];
const observing = (async () => {
  for await (const leader of observer.getElection('scheduler').observe({ signal: stopObserving.signal })) {
    const line = leader ? `leader ${leader.value} (epoch ${leader.epoch})` : 'no leader';
    seen.push(line);
    console.log(`  observer: ${line}`);
  }
})();
await sleep(100);

// --- Three candidates --------------------------------------------------------------------------
const replicas = ['replica-a', 'replica-b', 'replica-c'].map((name) => ({ name, locks: replica() }));
const ledBy: { name: string; epoch: number }[] = [];
const leading = new Map<string, Leadership>();
const campaigns = replicas.map(async ({ name, locks }) => {
  const leadership = await locks.getElection('scheduler').campaign({ value: name });
  ledBy.push({ name, epoch: leadership.epoch });
  leading.set(name, leadership);
  // The signal aborts if the leadership is lost (renewal failed, or the holder's clock ran out):
  // stop acting as the leader at once.
  leadership.signal.addEventListener('abort', () => console.log(`  ${name}: leadership lost`));
  console.log(`${name} leads, epoch ${leadership.epoch}`);
});

const nextLeader = async (): Promise<[string, Leadership]> => {
  while (leading.size === 0) await sleep(10);
  const entry = [...leading][0]!;
  leading.delete(entry[0]);
  return entry;
};

// The first leader publishes a new value, then steps down: the next one leads at once.
const [first, firstLeadership] = await nextLeader();
await firstLeadership.proclaim(`${first} (draining)`);
console.log(`${first} resigns`);
await firstLeadership.resign();

// The second leader's process dies (its client stops renewing without resigning): the third
// leads when its lease ends, within watchdogTimeout.
const [second] = await nextLeader();
console.log(`${second} dies without resigning`);
const diedAt = performance.now();
await replicas.find((r) => r.name === second)!.locks.close();
const [third, thirdLeadership] = await nextLeader();
console.log(`${third} took over ${Math.round(performance.now() - diedAt)} ms after ${second} died`);
const current = await observer.getElection('scheduler').leader();
console.log(`leader() from any client: ${JSON.stringify(current)}`);
await thirdLeadership.resign();
await Promise.all(campaigns);
await sleep(100);

stopObserving.abort();
await observing;
for (const { locks } of replicas) await locks.close();
await observer.close();
// Only the epoch counter is left (it never expires, like a fenced lock's token counter).
const admin = new Redis(found.url);
await admin.del(`{${keyPrefix}:scheduler}:election:epoch`);
admin.disconnect();
for (const redis of connections) redis.disconnect();
await found.release();

const epochs = ledBy.map((l) => l.epoch);
const increasing = epochs.every((epoch, i) => i === 0 || epoch > epochs[i - 1]!);
console.log(`epochs in order of leadership: ${epochs.join(', ')}; the observer saw ${seen.length} states`);
if (ledBy.length !== 3 || !increasing || current?.value !== third) process.exit(1);
