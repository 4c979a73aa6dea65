import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CJS_BUILD, ESM_BUILD, ROOT, ensureBuild } from '../helpers/built-package.js';
import { useLockFixture } from '../helpers/fixtures.js';

/** Above this, an error's report in a log is mostly code rather than the error. */
const MAX_BYTES_BEFORE_MESSAGE = 2_048;

/** The body of a program that loads the built package as `rlock` and `ioredis` as `Redis`, in each module system. */
const PROGRAMS = {
  esm: (body: string): string[] => [
    '--input-type=module',
    '-e',
    `const rlock = await import(${JSON.stringify(ESM_BUILD)}); const { Redis } = await import('ioredis');\n${body}`,
  ],
  cjs: (body: string): string[] => [
    '-e',
    `const rlock = require(${JSON.stringify(CJS_BUILD)}); const { Redis } = require('ioredis');\n(async () => {\n${body}\n})();`,
  ],
};

/** Runs a program in a child `node`; it must die of the error. Returns what it printed to stderr. */
async function stderrOf(args: string[]): Promise<string> {
  const failed = await promisify(execFile)('node', args, { cwd: ROOT, timeout: 20_000 }).then(
    () => undefined,
    (error: unknown) => error as { code: number; stderr: string },
  );
  expect(failed?.code).toBe(1);
  return failed!.stderr;
}

/** The bytes Node printed before the error's `Name: message` line (the throw site's source line and its caret). */
function bytesBefore(stderr: string, name: string): number {
  const at = stderr.indexOf(`\n${name}: `);
  expect(at, stderr.slice(0, 500)).toBeGreaterThan(0);
  return Buffer.byteLength(stderr.slice(0, at));
}

// Node reports an uncaught error with the source line it was thrown from. That line must be a
// line, not the built package's whole chunk.
describe('an uncaught rlock error from the built package', () => {
  const fx = useLockFixture();
  beforeAll(ensureBuild, 120_000);

  for (const [system, program] of Object.entries(PROGRAMS)) {
    it(`prints a short source line before its message (${system}): InvalidArgumentError`, async () => {
      const stderr = await stderrOf(program(`new rlock.LockClient(new Redis({ lazyConnect: true })).getLock('');`));
      expect(bytesBefore(stderr, 'InvalidArgumentError')).toBeLessThan(MAX_BYTES_BEFORE_MESSAGE);
    });

    it(`prints a short source line before its message (${system}): LockNotHeldError from unlock`, async () => {
      const stderr = await stderrOf(
        program(
          `const locks = new rlock.LockClient(new Redis(${JSON.stringify(fx.url)}), { keyPrefix: ${JSON.stringify(fx.prefix)} });\n` +
            `await locks.getLock('never-taken').unlock();`,
        ),
      );
      expect(bytesBefore(stderr, 'LockNotHeldError')).toBeLessThan(MAX_BYTES_BEFORE_MESSAGE);
      expect(stderr).toContain('is not held by the current owner');
    });
  }
});
