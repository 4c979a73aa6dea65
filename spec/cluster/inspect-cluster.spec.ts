import { spawn } from 'node:child_process';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCluster } from '../helpers/clients.js';
import { LockClient, type LockWarningInfo } from '../../lib/index.js';
import { spawnCluster, type SpawnedCluster } from '../../tools/redis-cluster.js';
import { until } from '../helpers/fixtures.js';
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

// A 3-master cluster (no replicas) of this file's own.
describe('inspection and the rlock command on a Cluster', () => {
  let cluster: SpawnedCluster;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    cluster = await spawnCluster(3, 0, 1_000);
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster.stop();
  }, 60_000);

  const client = (): LockClient => {
    const { connection: conn, close } = connectCluster(cluster.startupNodes);
    const locks = new LockClient(conn, { keyPrefix: 'ci' });
    locks.on('error', () => undefined);
    closers.push(async () => {
      await locks.close();
      await close();
    });
    return locks;
  };

  // Names whose locks land on different slots (and so, over 3 masters, on different nodes).
  const names = ['alpha', 'beta', 'gamma', 'delta', 'x}{y'];

  it('getHolders and getQueue on every kind, one slot per lock; the CLI lists the locks of every master', async () => {
    const a = client();
    const b = client();
    expect(new Set(names.map((name) => calculateSlot(`{ci:${name}}`))).size).toBe(names.length);
    for (const name of names) await a.getLock(name).lock();
    await a.getFencedLock('fenced').lockAndGetToken();
    await a.getReadWriteLock('rw').readLock().lock();
    await b.getReadWriteLock('rw').readLock().lock();
    const fair = await a.getFairLock('fair').acquire();
    const waiting = b.getFairLock('fair').acquire({ waitTime: 10_000 });
    waiting.catch(() => undefined);
    await until(async () => (await a.getFairLock('fair').getQueue()).length === 1);

    for (const name of names) expect((await b.getLock(name).getHolders()).map((h) => h.holdCount)).toEqual([1]);
    expect((await b.getFencedLock('fenced').getHolders())[0]!.token).toBe(1);
    expect(await b.getReadWriteLock('rw').readLock().getHolders()).toHaveLength(2);
    expect((await a.getFairLock('fair').getQueue())[0]!.owner.startsWith(`${b.id}|`)).toBe(true);

    const seeds = cluster.startupNodes.map((node) => `${node.host}:${node.port}`).join(',');
    const list = await rlock(['list', '--cluster', '--url', `redis://${seeds}`, '--prefix', 'ci', '--json']);
    expect(list.stderr).toBe('');
    const listed = (JSON.parse(list.stdout) as { locks: { name: string; kind: string }[] }).locks;
    expect(listed.map((l) => `${l.name}/${l.kind}`).sort()).toEqual(
      [...names.map((n) => `${n}/lock`), 'fenced/fenced', 'rw/read-write', 'fair/fair'].sort(),
    );
    const inspect = await rlock(['inspect', 'fair', '--cluster', '--url', `redis://${seeds}`, '--prefix', 'ci']);
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toContain('queue:    1 waiting, head first');

    await fair.release();
    await (await waiting).release();
  });

  it('warns about an evicting policy on any master', async () => {
    const port = cluster.startupNodes[1]!.port;
    const node = new Redis({ host: '127.0.0.1', port });
    closers.push(() => Promise.resolve(node.disconnect()));
    await node.config('SET', 'maxmemory-policy', 'volatile-lru');
    const warnings: LockWarningInfo[] = [];
    const locks = client();
    locks.on('warning', (info) => warnings.push(info));
    await locks.getLock('w').tryLock();
    await until(() => warnings.length > 0, 5_000);
    expect(warnings.map((w) => [w.server, w.policy])).toEqual([[`127.0.0.1:${port}`, 'volatile-lru']]);
    await node.config('SET', 'maxmemory-policy', 'noeviction');
  });
});
