import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { InvalidArgumentError } from '../errors.js';

/** Set by the specs, which run the sources: the thread's program bundled from them. */
let override: URL | undefined;

/** Specs only: the file the renewal thread runs (undefined: the package's own). */
export function useRenewalWorkerScript(url: URL | undefined): void {
  override = url;
}

/**
 * The renewal thread's program: the package's `dist/renewal-worker.js` (ESM, for both builds). Run
 * from the sources there is none (a TypeScript loader's hooks do not reach a Worker on Node 20):
 * the specs and the torture run bundle one and name it (useRenewalWorkerScript).
 */
export function renewalWorkerScript(): URL {
  if (override) return override;
  // The CJS build has no import.meta; the ESM build has no __filename.
  const here = typeof __filename === 'string' ? pathToFileURL(__filename).href : import.meta.url;
  const url = new URL('./renewal-worker.js', here);
  if (existsSync(url)) return url;
  throw new InvalidArgumentError(
    `renewalThread: the renewal thread's program is missing (${url.href}): renewalThread runs from rlock's built package, not from its sources`,
  );
}
