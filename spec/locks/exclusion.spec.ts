import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { contend, type ContendResult } from '../helpers/contend.js';
import { useLockFixture } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

describe('RLock: never two holders at once', () => {
  const fx = useLockFixture();

  it('30 unscoped tryLock(0) calls started in one tick: exactly one wins', async () => {
    const lock = fx.client().getLock('one-tick');
    const results = await Promise.all(Array.from({ length: 30 }, () => lock.tryLock(0)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('20 tasks × 10 rounds in one process never overlap', async () => {
    const lock = fx.client().getLock('tasks');
    const result = await contend(() => lock, fx.redis(), `${fx.prefix}:probe`, 20, 10);
    expect(result).toEqual({ entries: 200, violations: 0 });
    expect(await fx.keys()).toEqual([`${fx.prefix}:probe`]);
  });

  it('20 tasks × 10 rounds spread over 5 clients never overlap', async () => {
    const clients = Array.from({ length: 5 }, () => fx.client());
    const locks = clients.map((client) => client.getLock('clients'));
    const result = await contend((task) => locks[task % 5]!, fx.redis(), `${fx.prefix}:probe`, 20, 10);
    expect(result).toEqual({ entries: 200, violations: 0 });
  });

  it('3 child processes × 5 tasks × 10 rounds never overlap', async () => {
    const runs = Array.from({ length: 3 }, async () => {
      const child = spawn(
        process.execPath,
        [childBundle('spec/helpers/contend-worker.ts'), fx.url, fx.prefix, '5', '10'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      // A stuck child must fail the test with what it said, not hang the run.
      const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
      const [code] = (await once(child, 'exit')) as [number | null];
      clearTimeout(killer);
      expect({ code, err: code === 0 ? '' : err }).toEqual({ code: 0, err: '' });
      return JSON.parse(out) as ContendResult;
    });
    const results = await Promise.all(runs);
    expect(results).toEqual([
      { entries: 50, violations: 0 },
      { entries: 50, violations: 0 },
      { entries: 50, violations: 0 },
    ]);
    expect(await fx.keys()).toEqual([`${fx.prefix}:probe`]);
  }, 60_000);
});
