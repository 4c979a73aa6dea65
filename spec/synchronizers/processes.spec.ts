import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { until, useLockFixture } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

const NODE_ARGS = [childBundle('spec/helpers/synchronizer-worker.ts')];

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

describe('semaphore and latch across processes', () => {
  const fx = useLockFixture();

  for (const fair of [false, true]) {
    it(`never more than 3 permits out: 3 processes × 4 tasks × 8 rounds${fair ? ' (fair)' : ''}`, async () => {
      const workers = Array.from({ length: 3 }, () => worker(fx.url, fx.prefix, 'contend', '4', '8', '3', ...(fair ? ['fair'] : [])));
      const results = await Promise.all(workers.map(async ({ lines }) => JSON.parse(await nextLine(lines)) as { entries: number; violations: number; maxInside: number }));
      for (const { child } of workers) if (child.exitCode === null) await once(child, 'exit');
      expect(results.map((r) => r.violations)).toEqual([0, 0, 0]);
      expect(results.map((r) => r.entries)).toEqual([32, 32, 32]);
      expect(Math.max(...results.map((r) => r.maxInside))).toBeLessThanOrEqual(3);
      // Permits promised to a client that closed right after it was woken stay promised until the
      // promise ends (1 s, the key's TTL): then nothing but the probe's key is left.
      await until(async () => (await fx.keys()).length === 1, 3_000).catch(() => undefined);
      expect(await fx.keys()).toEqual([`${fx.prefix}:inside`]);
    }, 60_000);
  }

  it('a SIGKILLed holder’s permits come back when its lease ends (+ one renewal period at most)', async () => {
    const watchdogTimeout = 1_500;
    const { child, lines } = worker(fx.url, fx.prefix, 'hold', '3', '2', String(watchdogTimeout));
    expect(await nextLine(lines)).toBe('held');
    const sem = fx.client().getSemaphore('shared', { permits: 3 });
    expect(await sem.availablePermits()).toBe(1);
    const killed = performance.now();
    child.kill('SIGKILL');
    await once(child, 'exit');
    // Waits for the permits the dead holder had: back within its lease.
    const permit = await sem.acquire({ permits: 3, waitTime: 10_000 });
    const after = performance.now() - killed;
    expect(after).toBeLessThan(watchdogTimeout + 200);
    await permit.release();
    expect(await fx.keys()).toEqual([]);
  }, 30_000);

  it('a latch counted down to 0 releases waiters in 3 processes (one notice per client)', async () => {
    const opener = fx.client();
    const gate = opener.getCountDownLatch('gate');
    expect(await gate.trySetCount(2)).toBe(true);
    const workers = Array.from({ length: 3 }, () => worker(fx.url, fx.prefix, 'latch', '10'));
    for (const { lines } of workers) expect(await nextLine(lines)).toBe('waiting');
    expect(await gate.countDown()).toBe(1);
    expect(await gate.countDown()).toBe(0);
    const results = await Promise.all(workers.map(async ({ lines }) => JSON.parse(await nextLine(lines)) as { opened: number }));
    expect(results).toEqual([{ opened: 10 }, { opened: 10 }, { opened: 10 }]);
    expect(await gate.getCount()).toBe(0);
    expect(await fx.keys()).toEqual([]);
  }, 30_000);
});
