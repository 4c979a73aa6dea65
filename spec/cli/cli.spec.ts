import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseTarget } from '../../lib/cli/connect.js';
import { parseKey } from '../../lib/cli/list.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the real `rlock` command (lib/cli/main.ts, as dist/cli.js is built from it) as a child process. */
function rlock(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childBundle('lib/cli/main.ts'), ...args], {
      env: { ...process.env, ...env, NODE_NO_WARNINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('rlock CLI', () => {
  const fx = useLockFixture();
  const common = (): string[] => ['--url', fx.url, '--prefix', fx.prefix];

  it('inspect: a held reentrant lock, its hold count, TTL and a waiting client; --json', async () => {
    const holder = fx.client();
    const waiter = fx.client();
    const lease = await holder.runInContext(async () => {
      await holder.getLock('orders').lock(60_000);
      return holder.getLock('orders').acquire();
    });
    const waiting = waiter.getLock('orders').tryLock(10_000);
    waiting.catch(() => undefined);
    await until(async () => (await fx.redis().zcard(`{${fx.prefix}:orders}:waiters`)) === 1);

    const text = await rlock(['inspect', 'orders', ...common()]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('lock "orders"  (reentrant lock');
    expect(text.stdout).toMatch(new RegExp(`${lease.owner}\\s+2\\s+\\d+\\.\\d s`));
    expect(text.stdout).toContain('waiting clients: 1');
    expect(text.stdout).toContain(waiter.id);

    const json = await rlock(['inspect', 'orders', '--json', ...common()]);
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout) as { kind: string; holders: { owner: string; holdCount: number; ttl: number }[]; waitingClientCount: number };
    expect(view).toMatchObject({ kind: 'lock', holders: [{ owner: lease.owner, holdCount: 2 }], waitingClientCount: 1 });
    expect(view.holders[0]!.ttl).toBeGreaterThan(40_000);

    await holder.getLock('orders').forceUnlock();
    expect(await waiting).toBe(true);
    await waiter.getLock('orders').unlock();
  });

  it('inspect: fenced token, read-write modes, fair queue; no such lock and wrong kind exit 1', async () => {
    const a = fx.client();
    const b = fx.client();
    const token = await a.getFencedLock('ledger').lockAndGetToken();
    await a.getReadWriteLock('catalog').readLock().lock();
    await b.getReadWriteLock('catalog').readLock().lock();
    const fair = await a.getFairLock('exports').acquire();
    const queued = [b.getFairLock('exports').acquire(), sleep(30).then(() => a.getFairLock('exports').acquire())];
    for (const wait of queued) wait.catch(() => undefined);
    await until(async () => (await a.getFairLock('exports').getQueue()).length === 2);

    const fenced = await rlock(['inspect', 'ledger', ...common()]);
    expect(fenced.stdout).toContain(`token:    ${token} (the holder’s)`);
    const rw = JSON.parse((await rlock(['inspect', 'catalog', '--json', ...common()])).stdout) as { kind: string; holders: { mode: string }[] };
    expect(rw.kind).toBe('read-write');
    expect(rw.holders.map((h) => h.mode)).toEqual(['read', 'read']);
    const queue = await rlock(['inspect', 'exports', ...common()]);
    expect(queue.stdout).toContain('(fair lock');
    expect(queue.stdout).toContain('queue:    2 waiting, head first');
    expect(queue.stdout.indexOf(`1  ${b.id}|`)).toBeGreaterThan(0);
    expect(queue.stdout.indexOf(`2  ${a.id}|`)).toBeGreaterThan(queue.stdout.indexOf(`1  ${b.id}|`));

    const missing = await rlock(['inspect', 'nothing-here', ...common()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no lock "nothing-here"');
    const wrong = await rlock(['inspect', 'catalog', '--kind', 'fair', ...common()]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('lock "catalog" is a read-write lock, not a fair lock');

    await fair.release();
    for (const next of queued) await (await next).release();
  });

  it('list: SCAN groups keys into locks (elections too), --match filters, --json; none found exits 1', async () => {
    const a = fx.client();
    await a.getLock('job:1').lock();
    await a.getLock('job:2').lock(5_000);
    await a.getFencedLock('fenced:1').lockAndGetToken();
    await a.getFencedLock('fenced:1').unlock();
    await a.getElection('leader:1').campaign({ value: 'a' });
    await (await a.getElection('leader:2').campaign({ value: 'a' })).resign();
    const all = await rlock(['list', ...common()]);
    expect(all.code).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+HOLDERS\s+TTL\s+WAITING\s+HELD BY$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ['fenced:1', 'fenced', 'free'],
      ['job:1', 'lock', '1'],
      ['job:2', 'lock', '1'],
      ['leader:1', 'election', '1'],
      ['leader:2', 'election', 'free'],
    ]);
    const jobs = JSON.parse((await rlock(['list', '--match', 'job:*', '--json', ...common()])).stdout) as { locks: { name: string }[] };
    expect(jobs.locks.map((l) => l.name)).toEqual(['job:1', 'job:2']);
    const none = await rlock(['list', '--match', 'nope*', ...common()]);
    expect(none.code).toBe(1);
  });

  it('force-unlock: refuses without --yes and no terminal (exit 2); --yes says what it removed; then nothing to do (exit 1)', async () => {
    const holder = fx.client();
    holder.on('lost', () => undefined);
    const lease = await holder.getLock('stuck').acquire();
    const refused = await rlock(['force-unlock', 'stuck', ...common()]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('needs --yes');
    expect(await holder.getLock('stuck').isLocked()).toBe(true);

    const done = await rlock(['force-unlock', 'stuck', '--yes', ...common()]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('force-unlocked "stuck" (lock); removed:');
    expect(done.stdout).toContain(`${lease.owner} (holds 1, TTL`);
    expect(await holder.getLock('stuck').isLocked()).toBe(false);

    const again = await rlock(['force-unlock', 'stuck', '--yes', ...common()]);
    expect(again.code).toBe(1);

    const rw = fx.client().getReadWriteLock('rw');
    await rw.writeLock().lock();
    const json = JSON.parse((await rlock(['force-unlock', 'rw', '-y', '--json', ...common()])).stdout) as { removed: boolean; kind: string };
    expect(json).toMatchObject({ removed: true, kind: 'read-write' });
    expect(await rw.writeLock().isLocked()).toBe(false);
  });

  it('watch: one view per interval, the TTL counting down (--json, --count)', async () => {
    await fx.client().getLock('w').lock(10_000);
    const run = await rlock(['watch', 'w', '--interval', '300', '--count', '3', '--json', ...common()]);
    expect(run.code).toBe(0);
    const views = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { lock: { ttl: number } });
    expect(views).toHaveLength(3);
    expect(views[1]!.lock.ttl).toBeLessThan(views[0]!.lock.ttl - 200);
    expect(views[2]!.lock.ttl).toBeLessThan(views[1]!.lock.ttl - 200);
    const text = await rlock(['watch', 'free-one', '--interval', '100', '--count', '2', ...common()]);
    expect(text.code).toBe(0);
    expect(text.stdout.match(/rlock watch "free-one"/g)).toHaveLength(2);
    expect(text.stdout).toContain('free (nothing of it is in Redis)');
  });

  it('usage and connection errors: exit 2 and 5, with what was wrong', async () => {
    const cases: [string[], number, string][] = [
      [[], 2, 'no command'],
      [['frobnicate'], 2, 'unknown command'],
      [['inspect'], 2, 'one lock name'],
      [['list', '--bogus'], 2, "Unknown option '--bogus'"],
      [['inspect', 'x', '--url', 'http://localhost'], 2, 'bad --url'],
      [['inspect', 'x', '--url', 'redis://127.0.0.1:1'], 5, 'cannot connect to redis://127.0.0.1:1: connect ECONNREFUSED'],
      [['watch', 'x', '--interval', '0'], 2, '--interval must be a positive whole number'],
    ];
    for (const [args, code, message] of cases) {
      const run = await rlock(args);
      expect({ args, code: run.code }).toEqual({ args, code });
      expect(run.stderr).toContain(message);
    }
    const help = await rlock(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes, one meaning each for every command:');
    expect(help.stdout).toMatch(/ 5 {2}Redis unreachable/);
    expect(help.stdout).toMatch(/ 3 {2}exec: the lock was not taken/);
  });

  it('inspect and list name the process of each holder and waiter (host pid name), unknown when it wrote none', async () => {
    const holder = fx.client({ clientName: 'billing-worker' });
    const waiter = fx.client();
    const lease = await holder.getLock('orders').acquire();
    const waiting = waiter.getLock('orders').tryLock(10_000);
    waiting.catch(() => undefined);
    await until(async () => (await fx.redis().zcard(`{${fx.prefix}:orders}:waiters`)) === 1);
    const named = `${hostname()} ${process.pid} billing-worker`;

    const text = await rlock(['inspect', 'orders', ...common()]);
    expect(text.stdout).toMatch(/OWNER\s+HOLDS\s+TTL\s+PROCESS/);
    expect(text.stdout).toMatch(new RegExp(`${lease.owner}\\s+1\\s+\\S+ s\\s+${named}`));
    expect(text.stdout).toMatch(new RegExp(`${waiter.id}\\s+\\S+ m?s\\s+${hostname()} ${process.pid}\n`));
    const json = JSON.parse((await rlock(['inspect', 'orders', '--json', ...common()])).stdout) as { holders: { process: unknown }[]; waitingClients: { process: unknown }[] };
    expect(json.holders[0]!.process).toMatchObject({ host: hostname(), pid: process.pid, name: 'billing-worker' });
    expect(json.waitingClients[0]!.process).toMatchObject({ host: hostname(), pid: process.pid });

    const redis = fx.redis();
    await redis.hset(`{${fx.prefix}:foreign}`, 'someone-else:1', 1);
    await redis.pexpire(`{${fx.prefix}:foreign}`, 30_000);
    const list = await rlock(['list', ...common()]);
    const rows = list.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^NAME\s+KIND\s+HOLDERS\s+TTL\s+WAITING\s+HELD BY$/);
    expect(rows[1]).toMatch(/^foreign\s+lock\s+1\s+.*unknown process$/);
    expect(rows[2]).toMatch(new RegExp(`^orders\\s+lock\\s+1\\s+.*${named}$`));
    const listed = JSON.parse((await rlock(['list', '--json', ...common()])).stdout) as { locks: { name: string; heldBy: unknown[]; waitedBy: unknown[] }[] };
    expect(listed.locks[1]).toMatchObject({ name: 'orders', heldBy: [{ name: 'billing-worker' }], waitedBy: [{ pid: process.pid }] });
    expect(listed.locks[0]).toMatchObject({ name: 'foreign', heldBy: [null], waitedBy: [] });

    await lease.release();
    expect(await waiting).toBe(true);
    await waiter.getLock('orders').unlock();
  });

  it('a fair lock is listed and inspected as fair with an empty queue', async () => {
    const lease = await fx.client().getFairLock('exports').acquire();
    const list = await rlock(['list', ...common()]);
    expect(list.stdout.trim().split('\n')[1]).toMatch(/^exports\s+fair\s+1\s/);
    const text = await rlock(['inspect', 'exports', ...common()]);
    expect(text.stdout).toContain('(fair lock, key');
    expect(text.stdout).toContain('queue:    empty');
    expect((await rlock(['inspect', 'exports', '--kind', 'lock', ...common()])).code).toBe(1);
    await lease.release();
  });

  it('parses --url forms: redis, rediss, Sentinel, Cluster seeds', () => {
    expect(parseTarget('redis://u:p%40ss@10.0.0.1:6380/2', false)).toMatchObject({
      kind: 'standalone',
      options: { host: '10.0.0.1', port: 6380, db: 2, username: 'u', password: 'p@ss' },
      display: 'redis://***@10.0.0.1:6380/2',
    });
    expect(parseTarget('rediss://:secret@cache.internal', false)).toMatchObject({ options: { host: 'cache.internal', port: 6379, password: 'secret', tls: {} } });
    expect(parseTarget('redis+sentinel://:pw@s1:26379,s2/mymaster/1?sentinelPassword=spw', false)).toMatchObject({
      kind: 'sentinel',
      options: { sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }], name: 'mymaster', db: 1, password: 'pw', sentinelPassword: 'spw' },
    });
    expect(parseTarget('redis://a:7000,b:7001,[::1]:7002', true)).toMatchObject({
      kind: 'cluster',
      seeds: [{ host: 'a', port: 7000 }, { host: 'b', port: 7001 }, { host: '::1', port: 7002 }],
    });
    expect(() => parseTarget('redis://a:1,b:2', false)).toThrow('several hosts need --cluster');
    expect(() => parseTarget('redis+sentinel://s1:26379', false)).toThrow('names the master');
  });

  it('groups keys into locks whatever the name holds', () => {
    expect(parseKey('{rlock:a}b}', 'rlock')).toEqual({ name: 'a}b', suffix: '' });
    expect(parseKey('{rlock:a}b}:waiters', 'rlock')).toEqual({ name: 'a}b', suffix: ':waiters' });
    expect(parseKey('{rlock:x}:rec:r:c1:2', 'rlock')).toEqual({ name: 'x', suffix: ':rec:r:c1:2' });
    expect(parseKey('{rlock:s}:semaphore:queue', 'rlock')).toEqual({ name: 's', suffix: ':semaphore:queue' });
    expect(parseKey('{other:x}', 'rlock')).toBeUndefined();
  });
});
