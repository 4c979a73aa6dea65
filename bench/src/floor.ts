import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { distribution, type Distribution } from './stats.js';

const TRIVIAL_SCRIPT = 'return 1';

/**
 * The floor any lock call pays: sequential EVALSHA round trips of a script that does nothing,
 * on the connection given, in ms. With `idleMs`, each call follows that long a pause, as a
 * handoff after a hold does: both processes have gone idle and must be woken.
 */
export async function evalshaFloor(redis: Redis, calls: number, idleMs = 0): Promise<Distribution> {
  const sha = (await redis.script('LOAD', TRIVIAL_SCRIPT)) as string;
  const samples: number[] = [];
  for (let i = 0; i < calls; i += 1) {
    if (idleMs > 0) await sleep(idleMs);
    const start = performance.now();
    await redis.evalsha(sha, 0);
    samples.push(performance.now() - start);
  }
  return distribution(samples);
}
