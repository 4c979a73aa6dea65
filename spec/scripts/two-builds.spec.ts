import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleLua, luaEsbuildPlugin } from '../../tools/lua-bundle.mjs';
import { useLockFixture } from '../helpers/fixtures.js';

type Rlock = typeof import('../../lib/index.js');

const root = fileURLToPath(new URL('../../', import.meta.url));
// Under the repository, so the builds find its dependencies as an installed package would.
const out = join(root, 'node_modules/.cache/rlock-two-builds');

/** Builds `lib` as the package build does (tsup, the same Lua plugin) into `dir`; its ESM entry. */
async function buildCopy(lib: string, dir: string): Promise<string> {
  await build({
    entry: { index: join(lib, 'index.ts') },
    format: ['esm'],
    target: 'node20',
    outDir: dir,
    esbuildPlugins: [luaEsbuildPlugin()],
    dts: false,
    sourcemap: false,
    clean: true,
    silent: true,
    config: false,
  });
  return pathToFileURL(join(dir, 'index.js')).href;
}

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

// An application and one of its dependencies may each bundle rlock, at two versions whose
// scripts differ, and hand both the same ioredis connection. ioredis keeps the first text defined
// under a name: if two texts shared one, each copy would run the other's scripts without an error.
describe('two builds of rlock whose scripts differ, on one connection', () => {
  const fx = useLockFixture();
  let edited = '';
  let a: Rlock;
  let b: Rlock;

  beforeAll(async () => {
    mkdirSync(out, { recursive: true });
    edited = mkdtempSync(join(out, 'source-'));
    // Copy B: an include every acquire script has gets a line of code more (a new one per run:
    // comments are not sent, so they change no command).
    cpSync(join(root, 'lib'), join(edited, 'lib'), { recursive: true });
    appendFileSync(join(edited, 'lib/scripts/includes/server-time.lua'), `local build_b = '${randomUUID()}'\n`);
    a = (await import(/* @vite-ignore */ await buildCopy(join(root, 'lib'), join(out, 'a')))) as Rlock;
    b = (await import(/* @vite-ignore */ await buildCopy(join(edited, 'lib'), join(out, 'b')))) as Rlock;
  }, 120_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('lock one lock correctly, each with its own text under its own name', async () => {
    expect(a.LockClient).not.toBe(b.LockClient);
    const redis = fx.redis();
    const clientA = fx.track(new a.LockClient(redis, { keyPrefix: fx.prefix }));
    const clientB = fx.track(new b.LockClient(redis, { keyPrefix: fx.prefix }));
    const lockA = clientA.getLock('shared');
    const lockB = clientB.getLock('shared');

    expect(await lockA.tryLock(0, 10_000)).toBe(true);
    expect(await lockB.tryLock(0, 10_000)).toBe(false);
    await lockA.unlock();
    expect(await lockB.tryLock(0, 10_000)).toBe(true);
    expect(await lockA.tryLock(0, 10_000)).toBe(false);
    expect(await lockB.getHoldCount()).toBe(1);
    await lockB.unlock();
    expect(await lockA.isLocked()).toBe(false);
    // A waiter of one copy is woken by the release of the other.
    await lockA.lock(10_000);
    const waited = lockB.lock(10_000);
    await lockA.unlock();
    await waited;
    expect(await lockB.getHoldCount()).toBe(1);
    await lockB.unlock();

    const acquireA = bundleLua(join(root, 'lib/scripts/acquire-2.lua'));
    const acquireB = bundleLua(join(edited, 'lib/scripts/acquire-2.lua'));
    expect(acquireB.lua).not.toBe(acquireA.lua);
    // Each copy's own text reached Redis (B's is new on this server: it carries a fresh id), under
    // a name of its own.
    expect(await redis.script('EXISTS', sha1(acquireA.lua), sha1(acquireB.lua))).toEqual([1, 1]);
    expect(acquireB.name).not.toBe(acquireA.name);
    const commands = redis as unknown as Record<string, unknown>;
    expect([typeof commands[acquireA.name], typeof commands[acquireB.name]]).toEqual(['function', 'function']);
  });
});
