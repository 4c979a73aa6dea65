import type { RenewScript, ReplicaAck } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import { toLockError } from '../errors.js';
import readWriteHoldsLua from './read-write-holds.lua';
import renewManyLua from './renew-many.lua';
import renewOutcomeLua from './renew-outcome.lua';
import renewPermitsManyLua from './renew-permits-many.lua';
import renewReadWriteManyLua from './renew-read-write-many.lua';
import serverTimeLua from './server-time.lua';

// Versioned command names (see lock-scripts.ts).
const rwPrelude = serverTimeLua + readWriteHoldsLua + renewOutcomeLua;
const renewMany = renewOutcomeLua + renewManyLua;

// Redis 7 script flag: the script may touch keys of several slots (all on the node it runs on).
const CROSS_SLOT = '#!lua flags=allow-cross-slot-keys\n';

const COMMANDS = {
  renewMany: { name: 'rlockRenewManyV2', numberOfKeys: undefined, lua: renewMany },
  renewReadWriteMany: { name: 'rlockRenewReadWriteManyV1', numberOfKeys: undefined, lua: rwPrelude + renewReadWriteManyLua },
  renewManyCrossSlot: { name: 'rlockRenewManyCrossSlotV2', numberOfKeys: undefined, lua: CROSS_SLOT + renewMany },
  renewReadWriteManyCrossSlot: {
    name: 'rlockRenewReadWriteManyCrossSlotV1',
    numberOfKeys: undefined,
    lua: CROSS_SLOT + rwPrelude + renewReadWriteManyLua,
  },
  renewPermitsMany: { name: 'rlockRenewPermitsManyV1', numberOfKeys: undefined, lua: serverTimeLua + renewPermitsManyLua },
  renewPermitsManyCrossSlot: {
    name: 'rlockRenewPermitsManyCrossSlotV1',
    numberOfKeys: undefined,
    lua: CROSS_SLOT + serverTimeLua + renewPermitsManyLua,
  },
} as const;

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
    const command =
      script === 'lock'
        ? crossSlot ? COMMANDS.renewManyCrossSlot : COMMANDS.renewMany
        : script === 'permit'
          ? crossSlot ? COMMANDS.renewPermitsManyCrossSlot : COMMANDS.renewPermitsMany
          : crossSlot ? COMMANDS.renewReadWriteManyCrossSlot : COMMANDS.renewReadWriteMany;
    // Redis checks that declared keys share a slot even with the cross-slot flag (the flag
    // covers keys touched from Lua): a node batch declares only its first key, for routing.
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
