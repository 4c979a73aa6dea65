import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { spawnSentinelSet, type SpawnedSentinelSet } from '../../tools/redis-sentinel.js';
import { childBundle } from '../../tools/spec-children.js';

function rlock(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [childBundle('lib/cli/main.ts'), ...args], {
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('rlock CLI through Sentinel', () => {
  let set: SpawnedSentinelSet;
  let redis: Redis;
  let locks: LockClient;

  beforeAll(async () => {
    set = await spawnSentinelSet();
    redis = new Redis({ sentinels: set.sentinelNodes, name: set.name });
    redis.on('error', () => undefined);
    locks = new LockClient(redis, { keyPrefix: 'sen' });
    locks.on('lost', () => undefined);
  }, 60_000);
  afterAll(async () => {
    await locks.close();
    redis.disconnect();
    await set.stop();
  }, 60_000);

  it('inspects and force-unlocks through a redis+sentinel:// URL', async () => {
    const lease = await locks.getLock('via-sentinel').acquire({ leaseTime: 30_000 });
    const url = `redis+sentinel://${set.sentinelNodes.map((n) => `${n.host}:${n.port}`).join(',')}/${set.name}`;
    const inspect = await rlock(['inspect', 'via-sentinel', '--url', url, '--prefix', 'sen', '--json']);
    expect(inspect.stderr).toBe('');
    expect(JSON.parse(inspect.stdout)).toMatchObject({ kind: 'lock', holders: [{ owner: lease.owner, holdCount: 1 }] });
    const forced = await rlock(['force-unlock', 'via-sentinel', '--yes', '--url', url, '--prefix', 'sen']);
    expect(forced.code).toBe(0);
    expect(await locks.getLock('via-sentinel').isLocked()).toBe(false);
    const wrongMaster = await rlock(['list', '--url', url.replace(set.name, 'no-such-master')]);
    expect(wrongMaster.code).toBe(5);
  });
});
