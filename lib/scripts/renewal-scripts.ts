import type { RenewScript, ReplicaAck } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import { toLockError } from '../errors.js';
import renewLocks from './renew-many.lua';
import renewPermits from './renew-permits-many.lua';
import renewReadWrite from './renew-read-write-many.lua';

// No `#!lua` line: a script without flags may touch keys of several slots on its node (a
// Cluster node batch does), and at the memory limit Redis refuses only its first write that could
// grow memory, never its PEXPIRE. A `#!lua` line without `allow-oom` would refuse the whole script
// there, so a Cluster lock would lose its renewals at the limit where a standalone one keeps them.
/** The batched renewal script of each kind of hold, in one slot and across the slots of one node alike. */
const RENEW = { lock: renewLocks, readWrite: renewReadWrite, permit: renewPermits } as const;

/** The watchdog's batched renewal scripts, one per kind of hold (lock, read-write, permit). */
export class RenewalScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  async renewMany(
    script: RenewScript,
    keys: readonly string[],
    holders: readonly string[],
    ttlMs: number,
    crossSlot = false,
    ack?: ReplicaAck,
  ): Promise<{ results: number[]; acks: number | undefined }> {
    const command = RENEW[script];
    // Redis checks that declared keys share a slot (a script may touch others on its node): a
    // Cluster node batch declares only its first key, for routing.
    // The scripts read every key from ARGV either way, where a client adds no key prefix.
    const declared = crossSlot ? keys.slice(0, 1) : keys;
    const prefixed = this.#runner.keyPrefix ? keys.map((key) => this.#runner.keyPrefix + key) : keys;
    const args = [declared.length, ...declared, ttlMs, holders.length, ...prefixed, ...holders];
    try {
      if (!ack) {
        const reply = await this.#runner.run(command, 'renew', undefined, args);
        return { results: (reply as unknown[]).map(Number), acks: undefined };
      }
      const [reply, acks] = await this.#runner.port.runScriptThenWait(command, args, ack);
      return { results: (reply as unknown[]).map(Number), acks };
    } catch (error) {
      throw toLockError(error, 'renew', undefined);
    }
  }
}
