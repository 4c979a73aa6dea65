import type { Redis } from 'ioredis';
import { distribution, type Distribution } from './stats.js';

const TRIVIAL_SCRIPT = 'return 1';

/**
 * The floor any lock call pays: sequential EVALSHA round trips of a script that does nothing,
 * on the connection given, in ms.
 */
export async function evalshaFloor(redis: Redis, calls: number): Promise<Distribution> {
  const sha = (await redis.script('LOAD', TRIVIAL_SCRIPT)) as string;
  const samples: number[] = [];
  for (let i = 0; i < calls; i += 1) {
    const start = performance.now();
    await redis.evalsha(sha, 0);
    samples.push(performance.now() - start);
  }
  return distribution(samples);
}
