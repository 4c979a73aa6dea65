import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import type { LeaderInfo } from '../../lib/index.js';
import { useLockFixture } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

const NODE_ARGS = [childBundle('spec/helpers/leadership-worker.ts')];

/** A worker child; `lines` yields its stdout lines. */
function worker(url: string, prefix: string, ...args: string[]): { child: ChildProcessWithoutNullStreams; lines: AsyncIterator<string> } {
  const child = spawn(process.execPath, [...NODE_ARGS, url, prefix, ...args]);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) console.error(`worker failed (${code}): ${stderr}`);
  });
  return { child, lines: createInterface({ input: child.stdout })[Symbol.asyncIterator]() };
}

async function nextLine(lines: AsyncIterator<string>): Promise<string> {
  const next = await lines.next();
  if (next.done === true) throw new Error('worker ended early');
  return next.value;
}

describe('leadership across processes', () => {
  const fx = useLockFixture();

  it('a SIGKILLed leader is succeeded within its watchdogTimeout', async () => {
    const watchdogTimeout = 1_500;
    const { child, lines } = worker(fx.url, fx.prefix, 'lead', String(watchdogTimeout), 'doomed');
    const epoch = Number((await nextLine(lines)).split(' ')[1]);
    const election = fx.client().getElection('e');
    expect(await election.leader()).toEqual({ value: 'doomed', epoch });
    const killedAt = performance.now();
    child.kill('SIGKILL');
    await once(child, 'exit');
    const next = await election.campaign({ value: 'heir', waitTime: 10_000 });
    expect(performance.now() - killedAt).toBeLessThan(watchdogTimeout + 300);
    expect(next.epoch).toBeGreaterThan(epoch);
    expect(await election.leader()).toEqual({ value: 'heir', epoch: next.epoch });
    await next.resign();
  }, 30_000);

  it('observers in two other processes see every change, in order', async () => {
    const changes = 9;
    const observers = [worker(fx.url, fx.prefix, 'observe', String(changes)), worker(fx.url, fx.prefix, 'observe', String(changes))];
    for (const { lines } of observers) expect(await nextLine(lines)).toBe('ready');
    const a = fx.client().getElection('e');
    const b = fx.client().getElection('e');
    const expected: (LeaderInfo | null)[] = [];
    const first = await a.campaign({ value: 'a' });
    expected.push({ value: 'a', epoch: first.epoch });
    for (const value of ['a2', 'a3']) {
      await first.proclaim(value);
      expected.push({ value, epoch: first.epoch });
    }
    const waiting = b.campaign({ value: 'b' });
    await first.resign();
    const second = await waiting;
    expected.push(null, { value: 'b', epoch: second.epoch });
    await second.proclaim('b2');
    expected.push({ value: 'b2', epoch: second.epoch });
    await second.resign();
    expected.push(null);
    const third = await a.campaign({ value: 'c' });
    expected.push({ value: 'c', epoch: third.epoch });
    await third.resign();
    expected.push(null);
    expect(expected).toHaveLength(changes);
    for (const { child, lines } of observers) {
      const seen: unknown[] = [];
      for (let i = 0; i < changes; i += 1) seen.push(JSON.parse(await nextLine(lines)));
      expect(seen).toEqual(expected);
      if (child.exitCode === null) await once(child, 'exit');
    }
  }, 30_000);

  it('exactly one of five concurrent runExclusive calls in five processes runs', async () => {
    const workers = Array.from({ length: 5 }, () => worker(fx.url, fx.prefix, 'run'));
    for (const { lines } of workers) expect(await nextLine(lines)).toBe('ready');
    // Each run takes 1.5 s: the five attempts, sent at once, all fall within the one that runs.
    for (const { child } of workers) child.stdin.write('go\n');
    const results = await Promise.all(workers.map(async ({ lines }) => JSON.parse(await nextLine(lines)) as { ran: boolean }));
    for (const { child } of workers) if (child.exitCode === null) await once(child, 'exit');
    expect(results.filter((r) => r.ran)).toHaveLength(1);
    expect(await fx.redis().get(`${fx.prefix}:runs`)).toBe('1');
  }, 60_000);
});
