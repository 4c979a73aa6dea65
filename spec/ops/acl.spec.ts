import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';
import { sleep, until } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

/** The ACL line of the README's "Redis settings for locks", with its password placeholder. */
function readmeAclLine(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const line = readme.split('\n').find((text) => text.startsWith('ACL SETUSER rlock '));
  if (!line) throw new Error('README.md has no "ACL SETUSER rlock …" line');
  return line;
}

describe('the README’s ACL grant is enough for rlock', () => {
  let server: SpawnedRedis;
  const connections: Redis[] = [];
  const clients: LockClient[] = [];
  const client = (options: { watchdogTimeout?: number } = {}): LockClient => {
    const conn = new Redis(server.url, { username: 'rlock', password: 'change-me' });
    conn.on('error', () => undefined);
    connections.push(conn);
    const locks = new LockClient(conn, options);
    clients.push(locks);
    return locks;
  };

  beforeAll(async () => {
    server = await spawnRedis();
    const admin = new Redis(server.url);
    connections.push(admin);
    // `ACL SETUSER rlock on >change-me …` as the README writes it, sent word by word.
    const [, , ...rules] = readmeAclLine().split(/\s+/).filter(Boolean);
    await admin.call('ACL', 'SETUSER', ...rules.map((rule) => rule.replace('>CHANGE-ME', '>change-me')));
  });
  afterAll(async () => {
    for (const locks of clients) await locks.close();
    for (const conn of connections) conn.disconnect();
    await server.stop();
  });

  it('every lock kind, waiting and wake-ups, renewals, force-unlock, inspection; nothing else', async () => {
    const a = client({ watchdogTimeout: 600 });
    const b = client();
    const errors: unknown[] = [];
    for (const locks of [a, b]) locks.on('error', (error) => errors.push(error));
    let renewed = 0;
    a.on('renewed', () => (renewed += 1));

    // Reentrant: a waiter is woken by the release (pub/sub), the watchdog renews.
    const held = await a.getLock('job').acquire();
    const waiting = b.getLock('job').acquire({ waitTime: 5_000 });
    waiting.catch(() => undefined);
    await until(() => renewed > 0, 3_000);
    expect(await b.getLock('job').getHolders()).toHaveLength(1);
    await held.release();
    await (await waiting).release();

    // Fenced, read-write (readers woken at once), fair with a queue, force-unlock.
    expect(await a.getFencedLock('ledger').lockAndGetToken()).toBe(1);
    await a.getFencedLock('ledger').unlock();
    const writer = await a.getReadWriteLock('rw').writeLock().acquire();
    const reader = b.getReadWriteLock('rw').readLock().acquire({ waitTime: 5_000 });
    await sleep(50);
    await writer.release();
    await (await reader).release();
    const fair = await a.getFairLock('fair').acquire();
    const next = b.getFairLock('fair').acquire({ waitTime: 5_000 });
    await until(async () => (await a.getFairLock('fair').getQueue()).length === 1);
    expect(await a.getFairLock('fair').forceUnlock()).toBe(true);
    await (await next).release();
    await fair.release().catch(() => undefined);

    expect(errors).toEqual([]);
    // Only its own keys: anything else is refused.
    const conn = connections.at(-1)!;
    await expect(conn.get('other:key')).rejects.toThrow(/NOPERM/);
    await expect(conn.flushall()).rejects.toThrow(/NOPERM/);
  });

  it('the rlock CLI with the same user', async () => {
    await client().getLock('cli').lock();
    const url = `redis://rlock:change-me@127.0.0.1:${server.port}`;
    const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [childBundle('lib/cli/main.ts'), 'list', '--url', url], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
      child.on('close', (code) => resolve({ code, stdout }));
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^cli\s+lock\s+1\s/m);
  });
});
