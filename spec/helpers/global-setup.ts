import type { TestProject } from 'vitest/node';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';
import { bundleChildPrograms } from '../../tools/spec-children.js';
import { TEST_WORKERS } from './workers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The servers the tests share, one per test worker: REDIS_URL alone, or redis-servers spawned for this run. */
    redisUrls: string[];
    /** True when the tests started those servers themselves (so they may reconfigure them). */
    ownServer: boolean;
  }
}

let servers: SpawnedRedis[] = [];

export async function setup(project: TestProject): Promise<void> {
  // The programs specs run as child processes, from the sources as they are now.
  await bundleChildPrograms(project.config.root);
  const external = process.env.REDIS_URL;
  if (external) {
    project.provide('redisUrls', [external]);
    project.provide('ownServer', false);
    return;
  }
  // One server per worker: files that run at the same time never share a server, so command
  // counts and server settings stay a file's own, as when files ran one after another.
  servers = await Promise.all(Array.from({ length: TEST_WORKERS }, () => spawnRedis()));
  project.provide('redisUrls', servers.map((server) => server.url));
  project.provide('ownServer', true);
}

export async function teardown(): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()));
}
