import type { ScriptRunner } from './script-runner.js';
import readIdentities from './read-identities.lua';

/** Identity keys read per script call (well under Lua's limit on unpacked values). */
const READ_BATCH = 1_000;

/** The read of clients' process identities (read-identities.lua). */
export class IdentityScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  /** Each key's value, null where there is none; a failure as a LockRedisError (`operation: 'query'`). */
  async read(keys: readonly string[]): Promise<(string | null)[]> {
    const values: (string | null)[] = [];
    for (let i = 0; i < keys.length; i += READ_BATCH) {
      const batch = keys.slice(i, i + READ_BATCH);
      const reply = (await this.#runner.run(readIdentities, 'query', undefined, [batch.length, ...batch])) as unknown[];
      // A string, or bytes where the client returns them.
      for (const value of reply) values.push(typeof value === 'string' ? value : value instanceof Uint8Array ? Buffer.from(value).toString() : null);
    }
    return values;
  }
}
