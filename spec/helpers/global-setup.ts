import type { TestProject } from 'vitest/node';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server the tests share: REDIS_URL, or a redis-server spawned for this run. */
    redisUrl: string;
    /** True when the tests started that server themselves (so they may reconfigure it). */
    ownServer: boolean;
  }
}

let server: SpawnedRedis | undefined;

export async function setup(project: TestProject): Promise<void> {
  const external = process.env.REDIS_URL;
  if (external) {
    project.provide('redisUrl', external);
    project.provide('ownServer', false);
    return;
  }
  server = await spawnRedis();
  project.provide('redisUrl', server.url);
  project.provide('ownServer', true);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
