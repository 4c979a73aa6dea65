// Fencing tokens: a lock holder that pauses past its lease (a GC stall, a frozen VM, a long
// event-loop block) wakes up believing it still holds the lock. The lock cannot stop its late
// write; the storage can, if every write carries the holder's fencing token.
// Run: node --import tsx --import ./tools/register-lua.mjs examples/fenced-storage.ts
// (Redis: REDIS_URL, 127.0.0.1:6379, or a redis-server from PATH started on a free port.)
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockClient } from 'rlock';
import { findRedis } from '../tools/find-redis.js';

/** A toy storage service: it refuses a write whose token is lower than the highest it has seen. */
class FencedStorage {
  #highestToken = 0;
  readonly #data = new Map<string, string>();

  write(key: string, value: string, token: number): void {
    if (token < this.#highestToken) {
      throw new Error(`write refused: token ${token} is older than token ${this.#highestToken}`);
    }
    this.#highestToken = token;
    this.#data.set(key, value);
  }

  read(key: string): string | undefined {
    return this.#data.get(key);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const found = await findRedis();
console.log(`Redis: ${found.url} (${found.source})`);
const keyPrefix = `rlock-fenced-${randomUUID().slice(0, 8)}`;
const connections = [new Redis(found.url), new Redis(found.url)];
// Two service instances that both write the same file through the same lock.
const [a, b] = connections.map((redis) => new LockClient(redis, { keyPrefix })) as [LockClient, LockClient];
const log: string[] = [];
// A listener for `lost` (without one, rlock reports the first loss as a process warning).
a.on('lost', ({ name, reason }) => log.push(`A: the client reports lock "${name}" lost (${reason})`));
const storage = new FencedStorage();

const instanceA = async (): Promise<void> => {
  const lease = await a.getFencedLock('report.csv').acquire({ leaseTime: 500 });
  storage.write('report.csv', 'v1 from A', lease.token);
  log.push(`A: got token ${lease.token}, wrote "v1 from A"`);
  // A stalls for longer than its 500 ms lease...
  await sleep(900);
  log.push(`A: woke up after 900 ms; its lease had run out (lease.signal.aborted: ${lease.signal.aborted})`);
  // ...and, not checking, writes anyway with its old token.
  try {
    storage.write('report.csv', 'v2 from A (late)', lease.token);
    log.push('A: late write accepted: the file is corrupted');
  } catch (error) {
    log.push(`A: late write refused by the storage (${(error as Error).message})`);
  }
  await lease.release();
};

const instanceB = async (): Promise<void> => {
  await sleep(100);
  const lock = b.getFencedLock('report.csv');
  // Waits until A's lease runs out, then gets a greater token.
  const token = await lock.tryLockAndGetToken(5_000, 10_000);
  if (token === null) throw new Error('B did not get the lock');
  try {
    storage.write('report.csv', 'v2 from B', token);
    log.push(`B: got token ${token} once A's lease ran out, wrote "v2 from B"`);
    await sleep(600);
  } finally {
    await lock.unlock();
  }
};

await Promise.all([instanceA(), instanceB()]);
for (const line of log) console.log(line);
const final = storage.read('report.csv');
console.log(`storage holds: "${final}"`);

// The token counter is the one key a fenced lock keeps; this run's prefix is ours to remove.
await connections[0]!.del(`{${keyPrefix}:report.csv}:token`);
await a.close();
await b.close();
for (const redis of connections) redis.disconnect();
await found.release();
if (final !== 'v2 from B' || !log.some((line) => line.startsWith('A: late write refused'))) process.exit(1);
