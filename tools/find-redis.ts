import { Redis } from 'ioredis';
import { hasRedisServer, spawnRedis, type SpawnedRedis } from './redis-server.js';

/** A Redis to run against, and how to let go of it. */
export interface FoundRedis {
  readonly url: string;
  /** Where it came from, for the reader. */
  readonly source: 'REDIS_URL' | 'local' | 'spawned';
  /** Stops the server if we spawned it. */
  release(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * REDIS_URL if set; else a Redis on 127.0.0.1:6379; else a `redis-server` from PATH spawned on
 * a free loopback port; else an error that says how to get one.
 */
export async function findRedis(): Promise<FoundRedis> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) return { url: fromEnv, source: 'REDIS_URL', release: () => Promise.resolve() };
  const local = 'redis://127.0.0.1:6379';
  if (await answers(local)) return { url: local, source: 'local', release: () => Promise.resolve() };
  if (hasRedisServer()) {
    const server: SpawnedRedis = await spawnRedis();
    return { url: server.url, source: 'spawned', release: () => server.stop() };
  }
  throw new Error(
    'No Redis found: set REDIS_URL, start one on 127.0.0.1:6379, or install redis-server ' +
      '(Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis).',
  );
}
