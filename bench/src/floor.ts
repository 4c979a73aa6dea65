import { setTimeout as sleep } from 'node:timers/promises';
import type { GlideClient } from '@valkey/valkey-glide';
import type { Redis } from 'ioredis';
import type { NodeRedisClient } from './connections.js';
import { distribution, type Distribution } from './stats.js';

const TRIVIAL_SCRIPT = 'return 1';

/**
 * The floor any lock call pays: sequential EVALSHA round trips of a script that does nothing,
 * on the connection given, in ms. With `idleMs`, each call follows that long a pause, as a
 * handoff after a hold does: both processes have gone idle and must be woken.
 */
export async function evalshaFloor(connection: Redis | NodeRedisClient | GlideClient, calls: number, idleMs = 0): Promise<Distribution> {
  // ioredis, node-redis or GLIDE: the floor is taken on the client the library runs on.
  const call = (args: string[]): Promise<unknown> =>
    'defineCommand' in connection
      ? connection.call(args[0]!, ...args.slice(1))
      : 'customCommand' in connection
        ? connection.customCommand(args)
        : connection.sendCommand(args);
  const sha = String(await call(['script', 'load', TRIVIAL_SCRIPT]));
  const samples: number[] = [];
  for (let i = 0; i < calls; i += 1) {
    if (idleMs > 0) await sleep(idleMs);
    const start = performance.now();
    await call(['evalsha', sha, '0']);
    samples.push(performance.now() - start);
  }
  return distribution(samples);
}
