import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Set by the specs, which run the sources: the thread's program bundled from them. */
let override: URL | undefined;

/** Specs only: the file the renewal thread runs (undefined: the package's own). */
export function useRenewalWorkerScript(url: URL | undefined): void {
  override = url;
}

/**
 * The renewal thread's program: the package's `dist/renewal-worker.js` (ESM, for both builds),
 * or, run from the sources under a TypeScript loader (tsx), `worker-main.ts` beside this file.
 */
export function renewalWorkerScript(): URL {
  if (override) return override;
  // The CJS build has no import.meta; the ESM build has no __filename.
  const here = typeof __filename === 'string' ? pathToFileURL(__filename).href : import.meta.url;
  for (const name of ['./renewal-worker.js', './worker-main.ts']) {
    const url = new URL(name, here);
    if (existsSync(url)) return url;
  }
  throw new Error('rlock: the renewal thread’s program (dist/renewal-worker.js) is missing from the package');
}
