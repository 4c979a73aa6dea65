import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { SUBSCRIPTION_LINGER_MS } from '../../lib/options.js';
import { childBundle } from '../../tools/spec-children.js';
import { until, useLockFixture } from '../helpers/fixtures.js';

/** How long a process may take to exit once its connection quit (the child's own exit, not a timer of rlock's). */
const EXIT_WITHIN_MS = 2_000;

/**
 * On GLIDE, after a wait: rlock's own subscriber client (GLIDE's keeps the process alive) is closed
 * when its last channel is left, at the end of the waiters' linger (SUBSCRIPTION_LINGER_MS), which
 * began just before the quit.
 */
const GLIDE_EXIT_AFTER_WAIT_MS = SUBSCRIPTION_LINGER_MS + EXIT_WITHIN_MS;

/** Runs the idle worker; resolves with how long after printing `quit` it exited, or rejects if it did not exit within `killAfterMs`. */
function exitAfterQuit(args: string[], killAfterMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childBundle('spec/helpers/idle-worker.ts'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let quitAt: number | undefined;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('quit')) quitAt = performance.now();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the process was still alive ${killAfterMs} ms after it started (quit printed: ${quitAt !== undefined})`));
    }, killAfterMs);
    child.on('exit', (code) => {
      clearTimeout(killer);
      if (code !== 0 || quitAt === undefined) reject(new Error(`the worker failed (exit ${code}): ${stderr}`));
      else resolve(performance.now() - quitAt);
    });
  });
}

/** How many connections to the server carry `name` (CLIENT LIST). */
async function connectionsNamed(admin: Redis, name: string): Promise<number> {
  const list = String(await admin.call('client', 'list'));
  return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
}

// An idle LockClient (no holds, no waiters) never keeps its process alive, and the connections it
// made from the application's end when that one ends: an application that forgets close() still exits.
describe('an idle LockClient and the process', () => {
  const fx = useLockFixture();

  for (const family of ['ioredis', 'node-redis']) {
    for (const mode of ['once', 'waited']) {
      it(`a process exits once its connection quit, without locks.close() (${family}, ${mode === 'once' ? 'no wait' : 'after a wait'})`, async () => {
        const exitMs = await exitAfterQuit([family, fx.url, fx.prefix, mode]);
        expect(exitMs).toBeLessThan(EXIT_WITHIN_MS);
      });
    }
  }

  for (const mode of ['once', 'waited']) {
    it(`a process exits once its connection closed, without locks.close() (GLIDE, ${mode === 'once' ? 'no wait' : 'after a wait'})`, async () => {
      const exitMs = await exitAfterQuit(['glide', fx.url, fx.prefix, mode], 15_000);
      expect(exitMs).toBeLessThan(mode === 'once' ? EXIT_WITHIN_MS : GLIDE_EXIT_AFTER_WAIT_MS);
    });
  }

  /** The application's connection, named so CLIENT LIST finds it and what rlock duplicated from it. */
  const connections = {
    ioredis: (name: string) => {
      const redis = new Redis(fx.url, { connectionName: name });
      redis.on('error', () => undefined);
      return Promise.resolve({ connection: redis, quit: () => redis.quit(), reopen: () => redis.connect() });
    },
    'node-redis': async (name: string) => {
      const client = await createClient({ url: fx.url, name }).connect();
      client.on('error', () => undefined);
      return { connection: client, quit: () => client.close(), reopen: () => client.connect() };
    },
  };

  for (const [family, open] of Object.entries(connections)) {
    it(`rlock's own connections end when the application's ends, and come back with it (${family})`, async () => {
      const admin = fx.redis();
      const name = `idle-${fx.prefix}`;
      const app = await open(name);
      const locks = fx.track(new LockClient(app.connection, { keyPrefix: fx.prefix }));
      const other = fx.client();
      // A wait opens rlock's pub/sub connection (a duplicate of the application's, same name).
      expect(await other.getLock('l').tryLock(0, 200)).toBe(true);
      expect(await locks.getLock('l').tryLock(5_000)).toBe(true);
      await locks.getLock('l').unlock();
      expect(await connectionsNamed(admin, name)).toBe(2);

      await app.quit();
      await until(async () => (await connectionsNamed(admin, name)) === 0, 2_000);

      // The application's connection back: a waiter is woken by the release's notice again.
      await app.reopen();
      expect(await other.getLock('l').tryLock(0, 20_000)).toBe(true);
      const started = performance.now();
      const waited = locks.getLock('l').tryLock(5_000);
      setTimeout(() => void other.getLock('l').unlock(), 300);
      expect(await waited).toBe(true);
      expect(performance.now() - started).toBeLessThan(2_000);
      await locks.getLock('l').unlock();
      await locks.close();
      await app.quit();
    });
  }
});
