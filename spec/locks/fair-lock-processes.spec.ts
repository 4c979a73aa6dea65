import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { lockKeys } from '../../lib/keys.js';
import type { ContendResult } from '../helpers/contend.js';
import { until, useLockFixture } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';


/** A fair-worker child process: lines in on stdin, lines out from stdout. */
interface Worker {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far. */
  readonly lines: string[];
  send(line: string): void;
}

describe('fair lock across processes', () => {
  const fx = useLockFixture();
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  const startWorker = async (waitTimeout: number): Promise<Worker> => {
    const child = spawn(process.execPath, [childBundle('spec/helpers/fair-worker.ts'), fx.url, fx.prefix, String(waitTimeout)]);
    children.push(child);
    child.stderr.pipe(process.stderr);
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    await until(() => lines.includes('ready'), 20_000);
    return { child, lines, send: (line) => child.stdin.write(`${line}\n`) };
  };
  const queueLength = (admin: Redis): Promise<number> => admin.zcard(lockKeys(fx.prefix, 'shared').queue);

  it('10 waiters from 3 child processes, queued in a known order, get the lock in exactly that order', async () => {
    const admin = fx.redis();
    const workers = await Promise.all([startWorker(5_000), startWorker(5_000), startWorker(5_000)]);
    const holder = fx.client().getFairLock('shared');
    await holder.lock();
    for (let i = 0; i < 10; i += 1) {
      workers[(i * 2) % 3]!.send(`lock ${i}`);
      await until(async () => (await queueLength(admin)) === i + 1);
    }
    await holder.unlock();
    const results = () => workers.flatMap((worker) => worker.lines.filter((line) => line.startsWith('{')));
    await until(() => results().length === 10, 10_000);
    const byPosition = results()
      .map((line) => JSON.parse(line) as { tag: string; position: number })
      .sort((a, b) => a.position - b.position);
    expect(byPosition.map(({ tag }) => Number(tag))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const { child } of workers) child.stdin.end();
    for (const { child } of workers) {
      const [code] = (child.exitCode === null ? await once(child, 'exit') : [child.exitCode]) as [number];
      expect(code).toBe(0);
    }
    expect(await fx.keys()).toEqual([`${fx.prefix}:order`]);
  }, 60_000);

  it('a waiter whose process is SIGKILLed is skipped within fairLockWaitTimeout', async () => {
    const waitTimeout = 1_000;
    const admin = fx.redis();
    const doomed = await startWorker(waitTimeout);
    const holder = fx.client().getFairLock('shared');
    await holder.lock();
    doomed.send('lock dead');
    await until(async () => (await queueLength(admin)) === 1);
    // The next waiter checks in only every 10 s: it must wake when the dead one's place runs out.
    const next = fx.client({ fairLockWaitTimeout: 30_000 }).getFairLock('shared');
    const nextWaiting = next.tryLock(10_000);
    await until(async () => (await queueLength(admin)) === 2);

    const killedAt = performance.now();
    doomed.child.kill('SIGKILL');
    await once(doomed.child, 'exit');
    await holder.unlock();
    expect(await nextWaiting).toBe(true);
    expect(performance.now() - killedAt).toBeLessThan(waitTimeout + 700);
    await next.unlock();
    expect(doomed.lines.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(await fx.keys()).toEqual([]);
  }, 60_000);

  it('3 child processes × 5 tasks × 10 rounds never overlap', async () => {
    const runs = Array.from({ length: 3 }, async () => {
      const child = spawn(process.execPath, [childBundle('spec/helpers/contend-worker.ts'), fx.url, fx.prefix, '5', '10', 'fair'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      expect(code).toBe(0);
      return JSON.parse(out) as ContendResult;
    });
    expect(await Promise.all(runs)).toEqual([
      { entries: 50, violations: 0 },
      { entries: 50, violations: 0 },
      { entries: 50, violations: 0 },
    ]);
    expect(await fx.keys()).toEqual([`${fx.prefix}:probe`]);
  }, 60_000);
});
