import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { luaEsbuildPlugin } from './lua-bundle.mjs';

// The programs spec files start as child processes (the `rlock` command, the workers in
// spec/helpers), bundled once per test run from the sources as they are, with the package
// build's Lua plugin. A child then loads one file instead of compiling lib/ through tsx: about a
// second of CPU less for each of the ~80 children a full run starts.

/** Every program a spec runs as a child process, by its source path. */
export const CHILD_PROGRAMS = [
  'lib/cli/main.ts',
  'lib/renewal-thread/worker-main.ts',
  'spec/helpers/contend-worker.ts',
  'spec/helpers/fair-worker.ts',
  'spec/helpers/hand-off-worker.ts',
  'spec/helpers/idle-worker.ts',
  'spec/helpers/leadership-worker.ts',
  'spec/helpers/red-lock-contend-worker.ts',
  'spec/helpers/stall-worker.ts',
  'spec/helpers/redlock-hand-off-worker.ts',
  'spec/helpers/synchronizer-worker.ts',
] as const;

export type ChildProgram = (typeof CHILD_PROGRAMS)[number];

/** Under node_modules, so the bundles find the client packages (left out of them) as the sources do. */
const OUT_DIR = 'node_modules/.cache/rlock-spec-children';

/** The file `node` runs for `program`, relative to the repository root (the specs' working directory). */
export function childBundle(program: ChildProgram): string {
  return join(OUT_DIR, program.replace(/\.ts$/, '.mjs'));
}

/**
 * How a program that runs outside vitest is bundled from the sources: ESM for Node 20, the package
 * build's Lua plugin, the packages left out (found from node_modules). tools/torture/renewal.ts too.
 */
export const NODE_BUNDLE: BuildOptions = {
  outExtension: { '.js': '.mjs' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  plugins: [luaEsbuildPlugin()],
  logLevel: 'warning',
};

/** Builds every program's bundle under `root` (lib/ shared between them as chunks). */
export async function bundleChildPrograms(root: string): Promise<void> {
  await build({
    absWorkingDir: root,
    entryPoints: [...CHILD_PROGRAMS],
    outdir: OUT_DIR,
    outbase: '.',
    splitting: true,
    ...NODE_BUNDLE,
  });
}
