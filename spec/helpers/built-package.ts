import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built package's entry points, as `import` and `require` load them. */
export const ESM_BUILD = join(ROOT, 'dist/index.js');
export const CJS_BUILD = join(ROOT, 'dist/index.cjs');

/** What a build is made from: a change to any of them makes dist/ stale. */
const SOURCES = ['lib', 'tsup.config.ts', 'tools/lua-bundle.mjs'];
/** Held while one spec file checks or builds dist/ (tsup empties dist/ first: two at once would clash). */
const LOCK_DIR = join(ROOT, 'node_modules/.cache/rlock-build.lock');

/** Newest modification time of `path` or of the files under it, ms. */
function newest(path: string): number {
  if (!statSync(path).isDirectory()) return statSync(path).mtimeMs;
  return Math.max(...readdirSync(path, { recursive: true, encoding: 'utf8' }).map((file) => statSync(join(path, file)).mtimeMs));
}

function isFresh(): boolean {
  if (![ESM_BUILD, CJS_BUILD].every((file) => existsSync(file))) return false;
  const built = Math.min(statSync(ESM_BUILD).mtimeMs, statSync(CJS_BUILD).mtimeMs);
  return SOURCES.every((source) => newest(join(ROOT, source)) <= built);
}

/**
 * Builds dist/ when it is missing or older than its sources (CI has just built it), one spec file
 * at a time: a file that waited for another's build finds dist/ fresh and builds nothing.
 */
export async function ensureBuild(): Promise<void> {
  mkdirSync(join(LOCK_DIR, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock left behind by a killed run is older than any build takes.
      const held = statSync(LOCK_DIR, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 150_000) rmSync(LOCK_DIR, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    if (!isFresh()) await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
  } finally {
    rmdirSync(LOCK_DIR);
  }
}
