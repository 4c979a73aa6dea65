import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** ms from the start to the exit. */
  readonly ms: number;
}

/** The real `rlock` command (lib/cli/main.ts) as a child process; `done` settles at its exit. */
function rlock(args: string[]): { child: ChildProcessWithoutNullStreams; output: () => string; errors: () => string; done: Promise<Run> } {
  const started = performance.now();
  const child = spawn(process.execPath, [childBundle('lib/cli/main.ts'), ...args], {
    // An inspector opened by mistake takes a free port, not 9229 (a spec that fails must not disturb others).
    env: { ...process.env, NODE_NO_WARNINGS: '1', NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect-port=0` },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
  return { child, output: () => stdout, errors: () => stderr, done };
}

/** A node one-liner as the command to run. */
const nodeCommand = (script: string): string[] => [process.execPath, '-e', script];

describe('rlock exec', () => {
  const fx = useLockFixture();
  const common = (): string[] => ['--url', fx.url, '--prefix', fx.prefix];
  const key = (name: string): string => `{${fx.prefix}:${name}}`;

  it('runs the command holding the lock, passes its output on, exits with its status and frees the lock', async () => {
    const redis = fx.redis();
    const run = rlock(['exec', 'job', ...common(), '--', ...nodeCommand("console.log('working'); setTimeout(() => process.exit(7), 1500)")]);
    await until(() => run.output().includes('working'), 20_000);
    // Held while the command runs, in watchdog mode (the client's 30 s lease).
    expect(await redis.exists(key('job'))).toBe(1);
    expect(await redis.pttl(key('job'))).toBeGreaterThan(20_000);
    expect(await fx.client().runExclusive('job', () => 'ran', { atMostFor: 1_000 })).toEqual({ ran: false });
    const result = await run.done;
    expect(result.code).toBe(7);
    expect(result.stdout).toBe('working\n');
    expect(await redis.exists(key('job'))).toBe(0);
    const ok = await rlock(['exec', 'job', ...common(), '--', ...nodeCommand('process.exit(0)')]).done;
    expect(ok.code).toBe(0);
  }, 60_000);

  it('exits 3 without running the command when the lock is not taken within --wait; runs it once the lock frees in time', async () => {
    const holder = fx.client();
    const lease = await holder.getLock('job').acquire();
    const skipped = await rlock(['exec', 'job', '--wait', '300', ...common(), '--', ...nodeCommand("console.log('ran')")]).done;
    expect(skipped.code).toBe(3);
    expect(skipped.stdout).toBe('');
    expect(skipped.stderr).toContain('not taken within 300 ms');
    const waiting = rlock(['exec', 'job', '--wait', '20000', ...common(), '--', ...nodeCommand("console.log('ran')")]);
    await until(async () => (await fx.redis().zcard(`${key('job')}:waiters`)) === 1, 20_000);
    await lease.release();
    const ran = await waiting.done;
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe('ran\n');
    expect(await fx.redis().exists(key('job'))).toBe(0);
  }, 60_000);

  it('exits 4 after stopping the command with SIGTERM when the lock was lost while it ran (--lease ran out)', async () => {
    const run = rlock(['exec', 'job', '--lease', '2500', ...common(), '--', ...nodeCommand("process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(0); }); console.log('working'); setInterval(() => {}, 1000)")]);
    await until(() => run.output().includes('working'), 20_000);
    const workingAt = performance.now();
    const result = await run.done;
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('working\ngot SIGTERM\n');
    expect(result.stderr).toContain('was lost while the command ran');
    expect(performance.now() - workingAt).toBeLessThan(5_000);
    expect(await fx.redis().exists(key('job'))).toBe(0);
  }, 60_000);

  it('exits 4 after SIGKILL 5 s later when the command ignores SIGTERM', async () => {
    const run = rlock(['exec', 'job', '--lease', '2500', ...common(), '--', ...nodeCommand("process.on('SIGTERM', () => console.log('ignored')); console.log('working'); setInterval(() => {}, 1000)")]);
    await until(() => run.output().includes('working'), 20_000);
    const workingAt = performance.now();
    const result = await run.done;
    const after = performance.now() - workingAt;
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('working\nignored\n');
    // SIGTERM when the lease ran out (less than 2.5 s after 'working'), SIGKILL 5 s after it.
    expect(after).toBeGreaterThan(5_000);
    expect(after).toBeLessThan(10_000);
  }, 60_000);

  it('forwards signals to the command, exits with its status, and frees the lock', async () => {
    const redis = fx.redis();
    const run = rlock(['exec', 'job', ...common(), '--', ...nodeCommand("process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(9); }); console.log('working'); setInterval(() => {}, 1000)")]);
    await until(() => run.output().includes('working'), 20_000);
    run.child.kill('SIGTERM');
    const result = await run.done;
    expect(result.code).toBe(9);
    expect(result.stdout).toBe('working\ngot SIGTERM\n');
    expect(await redis.exists(key('job'))).toBe(0);

    // A command that a forwarded signal ends: 128 + its number.
    const killed = rlock(['exec', 'job', ...common(), '--', ...nodeCommand("console.log('working'); setInterval(() => {}, 1000)")]);
    await until(() => killed.output().includes('working'), 20_000);
    killed.child.kill('SIGINT');
    expect((await killed.done).code).toBe(130);
    expect(await redis.exists(key('job'))).toBe(0);
  }, 60_000);

  it('handles signals while it waits: SIGUSR1 opens no inspector and is ignored; SIGTERM and SIGINT end the wait with 128 + N', async () => {
    const holder = fx.client();
    const lease = await holder.getLock('job').acquire();
    const waiters = (): Promise<number> => fx.redis().zcard(`${key('job')}:waiters`);
    const waiting = async (args: string[]): Promise<ReturnType<typeof rlock>> => {
      const before = await waiters();
      const run = rlock(['exec', 'job', '--wait', '20000', ...common(), '--', ...args]);
      await until(async () => (await waiters()) > before, 20_000);
      return run;
    };
    const inspector = /Debugger listening|inspector/i;

    // SIGUSR1 (and SIGUSR2) are the command's: ignored until it runs, and Node's inspector stays shut.
    const patient = await waiting(nodeCommand("process.on('SIGUSR1', () => { console.log('got SIGUSR1'); process.exit(0); }); console.log('ran'); setInterval(() => {}, 1000)"));
    patient.child.kill('SIGUSR1');
    await sleep(500);
    expect(patient.child.exitCode).toBe(null);
    expect(patient.errors()).not.toMatch(inspector);
    await lease.release();
    // Once the command runs, SIGUSR1 is passed on to it.
    await until(() => patient.output().includes('ran'), 20_000);
    patient.child.kill('SIGUSR1');
    const ran = await patient.done;
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe('ran\ngot SIGUSR1\n');
    expect(ran.stderr).not.toMatch(inspector);
    expect(await fx.redis().exists(key('job'))).toBe(0);

    // SIGTERM, SIGINT: the wait ends, the command never runs, the holder keeps its lock.
    const held = await holder.getLock('job').acquire();
    for (const [signal, status] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
      const run = await waiting(nodeCommand("console.log('ran')"));
      run.child.kill(signal);
      const result = await run.done;
      expect(result.code, signal).toBe(status);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`${signal} while waiting for lock "job"; the command did not run`);
      expect(result.ms).toBeLessThan(20_000);
      expect((await holder.getLock('job').getHolders()).map((each) => each.owner)).toEqual([held.owner]);
    }
    await held.release();
    expect(await fx.redis().exists(key('job'))).toBe(0);
  }, 90_000);

  it('exits 127 for a command not found (the lock freed), 5 when Redis is unreachable (as every command)', async () => {
    const missing = await rlock(['exec', 'job', ...common(), '--', 'rlock-no-such-command-here']).done;
    expect(missing.code).toBe(127);
    expect(await fx.redis().exists(key('job'))).toBe(0);
    const unreachable = await rlock(['exec', 'job', '--url', 'redis://127.0.0.1:1', '--', 'true']).done;
    expect(unreachable.code).toBe(5);
  }, 60_000);

  it('bad usage exits 2 before connecting; --help documents the exit codes', async () => {
    // An unreachable URL: a usage error must come before any connection attempt (else 3).
    const url = ['--url', 'redis://127.0.0.1:1'];
    for (const args of [
      ['exec', 'job', ...url, '--'],
      ['exec', 'job', ...url],
      ['exec', '', ...url, '--', 'true'],
      ['exec', ...url, '--', 'true'],
      ['exec', 'a', 'b', ...url, '--', 'true'],
      ['exec', 'job', '--wait', '-1', ...url, '--', 'true'],
      ['exec', 'job', '--wait', 'soon', ...url, '--', 'true'],
      ['exec', 'job', '--lease', '10', ...url, '--', 'true'],
    ]) {
      const result = await rlock(args).done;
      expect(result.code, args.join(' ')).toBe(2);
    }
    const help = await rlock(['--help']).done;
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rlock exec <name> [--wait MS] [--lease MS] -- <command>');
    expect(help.stdout).toMatch(/ 5 {2}Redis unreachable, refused or failed \(exec: before the command started\)/);
    expect(help.stdout).toMatch(/ 4 {2}exec: the lock was lost while the command ran/);
    expect(help.stdout).toMatch(/ 3 {2}exec: the lock was not taken within --wait/);
  }, 120_000);
});
