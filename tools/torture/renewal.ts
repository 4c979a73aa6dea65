// The renewal threads' files (stall.ts), bundled once per run from the sources as they are: the
// thread's program (lib/renewal-thread/worker-main.ts) and its connect module (renewal-connect.ts).
// A worker thread does not inherit the workers' TypeScript loader (`--import tsx` does not reach
// it on Node 20), so the thread loads plain JavaScript, built the way tools/spec-children.ts builds
// the specs' child programs (the package build's Lua plugin, packages left out).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../spec-children.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface RenewalBundle {
  /** The thread's program and its connect module, as file URLs (for WorkerConfig.renewal). */
  readonly worker: string;
  readonly connect: string;
  /** Deletes the files. */
  remove(): Promise<void>;
}

/** Builds the two files under node_modules (so they find the client packages as the sources do), in a directory of this run's. */
export async function bundleRenewal(): Promise<RenewalBundle> {
  const outdir = join(ROOT, 'node_modules', '.cache', `rlock-torture-${process.pid}`);
  await build({
    absWorkingDir: ROOT,
    entryPoints: { 'renewal-worker': 'lib/renewal-thread/worker-main.ts', 'renewal-connect': 'tools/torture/renewal-connect.ts' },
    outdir,
    ...NODE_BUNDLE,
  });
  return {
    worker: pathToFileURL(join(outdir, 'renewal-worker.mjs')).href,
    connect: pathToFileURL(join(outdir, 'renewal-connect.mjs')).href,
    remove: () => rm(outdir, { recursive: true, force: true }),
  };
}
