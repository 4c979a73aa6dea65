import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { LockLostError, type Lease, type LeaseHandle, type Permit } from '../../lib/index.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';
import { ALL_KINDS, takenByOther } from './kinds.js';
import { childBundle } from '../../tools/spec-children.js';

const NODE_ARGS = [childBundle('spec/helpers/hand-off-worker.ts')];

/** Runs a child that takes 'moved' in `kind`, hands it off and idles: its handle and the child. */
async function handedOffByChild(url: string, prefix: string, kind: string, watchdogTimeout: number) {
  const child = spawn(process.execPath, [...NODE_ARGS, url, prefix, kind, String(watchdogTimeout)]);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = await lines.next();
  if (next.done === true) throw new Error(`hand-off worker ended early: ${stderr}`);
  return { child, handle: JSON.parse(next.value) as LeaseHandle };
}

describe('hand-off across processes', () => {
  const fx = useLockFixture();
  const watchdogTimeout = 400;

  for (const kind of ALL_KINDS) {
    it(`${kind}: a child takes and hands off, is SIGKILLed; the adopter renews past 3 × watchdogTimeout, then releases`, async () => {
      const { child, handle } = await handedOffByChild(fx.url, fx.prefix, kind, watchdogTimeout);
      child.kill('SIGKILL');
      await once(child, 'exit');
      const adopter = fx.client({ watchdogTimeout });
      const lost: string[] = [];
      adopter.on('lost', (info) => lost.push(info.reason));
      const held = (await adopter.adopt(handle)) as Lease | Permit;
      await sleep(3 * watchdogTimeout + 300);
      expect(held.signal.aborted).toBe(false);
      expect(lost).toEqual([]);
      expect(await takenByOther(fx.client(), kind, 'moved')).toBe(true);
      await held.release();
      expect(await takenByOther(fx.client(), kind, 'moved')).toBe(false);
      // The dead child's handle cannot be used twice.
      await expect(fx.client().adopt(handle)).rejects.toBeInstanceOf(LockLostError);
    }, 20_000);
  }

  it('a hold handed off by a child that then dies, and never adopted, frees within the gap', async () => {
    const { child, handle } = await handedOffByChild(fx.url, fx.prefix, 'lock', watchdogTimeout);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(await takenByOther(fx.client(), 'lock', 'moved')).toBe(true);
    await sleep(watchdogTimeout + 100);
    expect(await takenByOther(fx.client(), 'lock', 'moved')).toBe(false);
    await expect(fx.client().adopt(handle)).rejects.toBeInstanceOf(LockLostError);
  }, 20_000);

  it('four clients adopt a dead child’s handle at once: exactly one holds it', async () => {
    const { child, handle } = await handedOffByChild(fx.url, fx.prefix, 'lock', 5_000);
    child.kill('SIGKILL');
    const adopters = Array.from({ length: 4 }, () => fx.client());
    const results = await Promise.allSettled(adopters.map((client) => client.adopt(handle)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'fulfilled') await r.value.release();
  }, 20_000);

  it('two child processes adopt one handle at the same moment: exactly one wins', async () => {
    for (let round = 0; round < 2; round += 1) {
      // The adopters start first (a process start takes seconds here), then get the handle at once.
      const adopters = [0, 1].map(() => spawn(process.execPath, [...NODE_ARGS, fx.url, fx.prefix, 'adopt', '5000']));
      const lines = adopters.map((adopter) => createInterface({ input: adopter.stdout })[Symbol.asyncIterator]());
      for (const line of lines) expect((await line.next()).value).toBe('ready');
      const { child, handle } = await handedOffByChild(fx.url, fx.prefix, 'lock', 10_000);
      child.kill('SIGKILL');
      for (const adopter of adopters) adopter.stdin.write(`${JSON.stringify(handle)}\n`);
      const outcomes = await Promise.all(lines.map(async (line) => (await line.next()).value as string));
      expect(outcomes.sort()).toEqual(['lost', 'won']);
      for (const adopter of adopters) if (adopter.exitCode === null) await once(adopter, 'exit');
      expect(await takenByOther(fx.client(), 'lock', 'moved')).toBe(false);
    }
  }, 120_000);
});
