import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { bundleLua, luaEsbuildPlugin, LuaBundleError } from '../../tools/lua-bundle.mjs';

// The build step every loader calls (tsup, vitest, the Node hook): includes, names, key counts.

const ROOT = '/virtual/scripts/';

/** bundleLua over files held in memory (paths relative to ROOT). */
function bundle(entry: string, files: Record<string, string>) {
  const read = (path: string): string => {
    const text = files[path.slice(ROOT.length)];
    if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    return text;
  };
  return bundleLua(ROOT + entry, read);
}

function bundleError(entry: string, files: Record<string, string>): LuaBundleError {
  try {
    bundle(entry, files);
  } catch (error) {
    expect(error).toBeInstanceOf(LuaBundleError);
    return error as LuaBundleError;
  }
  throw new Error('bundled without an error');
}

const code = (lua: string): string[] => lua.split('\n').filter((line) => line !== '' && !line.startsWith('--'));

describe('the Lua include resolver', () => {
  it('puts each include in place of its line, nested includes first', () => {
    const { lua, files } = bundle('get-1.lua', {
      'get-1.lua': '-- entry\n--- @include "includes/b.lua"\nreturn b()\n',
      'includes/a.lua': 'local function a() return 1 end\n',
      'includes/b.lua': '--- @include "a.lua"\nlocal function b() return a() end\n',
    });
    expect(code(lua)).toEqual(['local function a() return 1 end', 'local function b() return a() end', 'return b()']);
    expect(files.map((file) => file.slice(ROOT.length))).toEqual(['get-1.lua', 'includes/b.lua', 'includes/a.lua']);
  });

  it('includes a file once, where it is first asked for', () => {
    const { lua } = bundle('get-1.lua', {
      'get-1.lua': '--- @include "includes/a.lua"\n--- @include "includes/b.lua"\n--- @include "includes/a.lua"\nreturn b()\n',
      'includes/a.lua': 'local function a() return 1 end\n',
      'includes/b.lua': '--- @include "a.lua"\nlocal function b() return a() end\n',
    });
    expect(code(lua)).toEqual(['local function a() return 1 end', 'local function b() return a() end', 'return b()']);
  });

  it('fails the build on a missing include, naming the file that asks for it', () => {
    const error = bundleError('get-1.lua', {
      'get-1.lua': '--- @include "includes/b.lua"\nreturn b()\n',
      'includes/b.lua': '--- @include "gone.lua"\nlocal function b() return 1 end\n',
    });
    expect(error.message).toMatch(/includes\/b\.lua: includes "gone\.lua", which cannot be read \(ENOENT\)/);
  });

  it('fails the build on an include cycle, naming it', () => {
    const error = bundleError('get-1.lua', {
      'get-1.lua': '--- @include "includes/a.lua"\nreturn 1\n',
      'includes/a.lua': '--- @include "b.lua"\n',
      'includes/b.lua': '--- @include "a.lua"\n',
    });
    expect(error.message).toMatch(/include cycle: a\.lua -> b\.lua -> a\.lua/);
  });

  it('fails the build on a malformed include line', () => {
    const error = bundleError('get-1.lua', { 'get-1.lua': "--- @include 'a.lua'\nreturn 1\n" });
    expect(error.message).toMatch(/get-1\.lua: malformed include line/);
  });

  it('lets a prologue come first in an entry only', () => {
    const files = {
      'includes/early.lua': '--- @prologue\nlocal x = 1\n',
      'includes/a.lua': 'local function a() return 1 end\n',
      'first-1.lua': '-- comments may come before it\n--- @include "includes/early.lua"\n--- @include "includes/a.lua"\nreturn x\n',
      'late-1.lua': '--- @include "includes/a.lua"\n--- @include "includes/early.lua"\nreturn x\n',
      'after-code-1.lua': 'local y = 2\n--- @include "includes/early.lua"\nreturn x\n',
      'nested-1.lua': '--- @include "includes/wraps.lua"\nreturn x\n',
      'includes/wraps.lua': '--- @include "early.lua"\n',
    };
    expect(code(bundle('first-1.lua', files).lua)[0]).toBe('local x = 1');
    for (const entry of ['late-1.lua', 'after-code-1.lua', 'nested-1.lua']) {
      expect(bundleError(entry, files).message).toMatch(/"(includes\/)?early\.lua" is a prologue/);
    }
  });

  it('names a command from its resolved text: an edit to an include renames every command that has it', () => {
    const files = {
      'get-2.lua': '--- @include "includes/a.lua"\nreturn a()\n',
      'put-2.lua': 'return 1\n',
      'includes/a.lua': 'local function a() return 1 end\n',
    };
    const before = bundle('get-2.lua', files);
    expect(before.name).toMatch(/^rlock_get_2_[0-9a-f]{10}$/);
    expect(before.numberOfKeys).toBe(2);
    expect(bundle('get-2.lua', files).name).toBe(before.name);
    const edited = { ...files, 'includes/a.lua': 'local function a() return 2 end\n' };
    expect(bundle('get-2.lua', edited).name).not.toBe(before.name);
    expect(bundle('put-2.lua', edited).name).toBe(bundle('put-2.lua', files).name);
  });

  it('sends no comment, blank line or indentation: a comment edit leaves the text and the name', () => {
    const files = { 'get-1.lua': '-- what it does\n\nif true then\n  return 1 -- kept: not a whole line\nend\n' };
    const commented = { 'get-1.lua': '-- what it does, said again\n--- and more\nif true then\n    return 1 -- kept: not a whole line\nend\n' };
    expect(bundle('get-1.lua', files).lua).toBe('if true then\nreturn 1 -- kept: not a whole line\nend');
    expect(bundle('get-1.lua', commented).name).toBe(bundle('get-1.lua', files).name);
  });

  it('takes the key count from the entry name, or none (given per call)', () => {
    expect(bundle('renew-many.lua', { 'renew-many.lua': 'return 1\n' }).numberOfKeys).toBeUndefined();
    expect(bundleError('includes/a.lua', { 'includes/a.lua': 'return 1\n' }).message).toMatch(/an include is not a command/);
  });
});

describe("rlock's own scripts", () => {
  const dir = fileURLToPath(new URL('../../lib/scripts/', import.meta.url));
  const entries = readdirSync(dir).filter((file) => file.endsWith('.lua'));
  const helpers = readdirSync(dir + 'includes').flatMap((file) =>
    [...readFileSync(`${dir}includes/${file}`, 'utf8').matchAll(/^local function (\w+)\(/gm)].map((match) => match[1]!),
  );

  it('define every shared function they call above the call', () => {
    expect(entries.length).toBeGreaterThan(30);
    for (const entry of entries) {
      const text = code(bundleLua(dir + entry).lua).join('\n');
      for (const helper of helpers) {
        const defined = text.indexOf(`local function ${helper}(`);
        for (const call of text.matchAll(new RegExp(`(?<![\\w.])${helper}\\(`, 'g'))) {
          if (call.index === defined + 'local function '.length) continue;
          expect({ entry, helper, definedAbove: defined >= 0 && defined < call.index }).toEqual({ entry, helper, definedAbove: true });
        }
      }
    }
  });

  // A `#!lua` line without allow-oom makes Redis refuse the whole script at the memory limit.
  it('carry no flags line and never share a name', () => {
    const built = entries.map((entry) => bundleLua(dir + entry));
    expect(new Set(built.map((command) => command.name)).size).toBe(entries.length);
    expect(built.filter((command) => command.lua.startsWith('#!')).map((command) => command.name)).toEqual([]);
  });

  it('come out of the build plugin as bundleLua makes them, a helper they share kept once', async () => {
    const some = ['acquire-2.lua', 'release-2.lua', 'fair-acquire-3.lua', 'semaphore-acquire-8.lua'];
    const source = some.map((entry, i) => `export { default as c${i} } from './${entry}';`).join('\n');
    const result = await build({ stdin: { contents: source, resolveDir: dir, loader: 'js' }, bundle: true, write: false, format: 'esm', plugins: [luaEsbuildPlugin()] });
    const code = result.outputFiles[0]!.text;
    const built = (await import(`data:text/javascript,${encodeURIComponent(code)}`)) as Record<string, unknown>;
    some.forEach((entry, i) => {
      const { name, numberOfKeys, lua } = bundleLua(dir + entry);
      expect(built[`c${i}`]).toEqual({ name, numberOfKeys, lua });
    });
    expect(code.split('local function server_ms()').length - 1).toBe(1);
  });
});
