import type { LockCore } from '../core.js';
import type { WaitTarget } from '../keys.js';
import type { PublishCommand, WaiterMode } from '../scripts/registry.js';
import { ScriptRunner } from '../scripts/script-runner.js';
import type { CallRequest } from '../scripts/request-window.js';
import callLogLua from '../scripts/call-log.lua';
import electionAnnounceLua from '../scripts/election-announce.lua';
import electionCampaignLua from '../scripts/election-campaign-4.lua';
import electionProclaimLua from '../scripts/election-proclaim-2.lua';
import electionResignLua from '../scripts/election-resign-5.lua';
import endedHoldsLua from '../scripts/ended-holds.lua';
import electionStateLua from '../scripts/election-state-2.lua';
import enterHoldLua from '../scripts/enter-hold.lua';
import keepHoldLua from '../scripts/keep-hold-1.lua';
import noticeLua from '../scripts/notice.lua';
import releaseHoldLua from '../scripts/release-hold.lua';
import requestWindowLua from '../scripts/request-window.lua';
import serverTimeLua from '../scripts/server-time.lua';
import waiterSetLua from '../scripts/waiter-set.lua';
import wakeOneLua from '../scripts/wake-one.lua';

/** Every key and channel of one election; all share the `{<prefix>:<name>}` hash tag. */
export interface ElectionKeys {
  readonly name: string;
  /** Hash: the leader's owner id → 1, its call log, 'epoch', 'value', 'rev'; TTL = the lease. */
  readonly election: string;
  /** Integer: the last epoch given; never expires, so epochs only grow. */
  readonly epoch: string;
  /** Channel every observing client subscribes to (election-announce.lua). */
  readonly changes: string;
  /** Campaigners wait as for an exclusive lock: one client is woken when the leader steps down. */
  readonly wait: WaitTarget;
  /** Records answering a resent resign whose hold is gone. */
  readonly records: string;
}

export function electionKeys(keyPrefix: string, name: string): ElectionKeys {
  const base = `{${keyPrefix}:${name}}:election`;
  const waiters = `${base}:waiters`;
  const wakePrefix = `${base}:wake:`;
  return {
    name,
    election: base,
    epoch: `${base}:epoch`,
    changes: `${base}:changes`,
    wait: { name, lock: base, waiters, wakePrefix, handOnWaiters: waiters, handOnWakePrefix: wakePrefix, wakeAll: false },
    records: `${base}:rec:`,
  };
}

const enter = serverTimeLua + waiterSetLua + requestWindowLua + callLogLua + enterHoldLua;

// Versioned names, as for the lock scripts: two rlock versions sharing a connection never swap them.
const COMMANDS = {
  campaign: { name: 'rlockElectionCampaignV3', numberOfKeys: 4, lua: enter + electionAnnounceLua + electionCampaignLua },
  resign: { name: 'rlockElectionResignV4', numberOfKeys: 5, lua: requestWindowLua + endedHoldsLua + callLogLua + releaseHoldLua + noticeLua + wakeOneLua + electionAnnounceLua + electionResignLua },
  proclaim: { name: 'rlockElectionProclaimV3', numberOfKeys: 2, lua: requestWindowLua + callLogLua + electionAnnounceLua + electionProclaimLua },
  state: { name: 'rlockElectionStateV1', numberOfKeys: 2, lua: electionStateLua },
  keepHold: { name: 'rlockKeepHoldV1', numberOfKeys: 1, lua: keepHoldLua },
} as const;

/** What one read of an election says (election-state-2.lua). */
export interface ElectionState {
  /** The last epoch ever given for this name (0: never). */
  readonly lastEpoch: number;
  /** The leader now, if any. */
  readonly leader: { readonly epoch: number; readonly rev: number; readonly value: string; readonly ttlMs: number } | null;
}

/**
 * The scripts of elections and of runExclusive. They run through a runner of their own on the
 * client's connection (one per client), so the shared script registry stays as it is.
 */
export class ElectionScripts {
  readonly #runner: ScriptRunner;

  private constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  static readonly #ofCore = new WeakMap<LockCore, ElectionScripts>();

  /** The scripts of `core`'s connection, made on first use. */
  static of(core: LockCore): ElectionScripts {
    let scripts = ElectionScripts.#ofCore.get(core);
    if (!scripts) {
      scripts = new ElectionScripts(new ScriptRunner(core.redis));
      ElectionScripts.#ofCore.set(core, scripts);
    }
    return scripts;
  }

  /** `{ epoch }` when `owner` leads now (taken, or a resent call that took it), else the leader's PTTL. */
  async campaign(
    keys: ElectionKeys,
    owner: string,
    leaseMs: number,
    clientId: string,
    mode: WaiterMode,
    request: CallRequest,
    value: string,
    publish: PublishCommand,
  ): Promise<{ epoch: number } | { ttlMs: number }> {
    const args = [keys.election, keys.wait.waiters, keys.epoch, keys.changes, owner, leaseMs, clientId, mode, request.id, value, publish];
    const reply = await this.#runner.run(COMMANDS.campaign, 'acquire', keys.name, args, 'lock', request);
    return Array.isArray(reply) ? { epoch: Number(reply[0]) } : { ttlMs: Number(reply) };
  }

  /** The holds `owner` has left (0: stepped down), or -1 (ScriptStatus.NotHeld). */
  async resign(keys: ElectionKeys, owner: string, reExpireMs: number, request: CallRequest, publish: PublishCommand, recordMs: number): Promise<number> {
    const args = [keys.election, keys.wait.waiters, keys.wait.wakePrefix, keys.records, keys.changes, owner, reExpireMs, request.id, publish, recordMs];
    return Number(await this.#runner.run(COMMANDS.resign, 'release', keys.name, args, 'lock', request));
  }

  /** The proclaim count of the epoch after this one, or -1 when `owner` does not lead. */
  async proclaim(keys: ElectionKeys, owner: string, request: CallRequest, value: string, publish: PublishCommand): Promise<number> {
    const args = [keys.election, keys.changes, owner, request.id, value, publish];
    return Number(await this.#runner.run(COMMANDS.proclaim, 'acquire', keys.name, args, 'lock', request));
  }

  async state(keys: ElectionKeys): Promise<ElectionState> {
    const reply = (await this.#runner.run(COMMANDS.state, 'query', keys.name, [keys.election, keys.epoch])) as unknown[];
    const lastEpoch = Number(reply[0]);
    if (reply[1] === null || reply[1] === false || reply[1] === undefined) return { lastEpoch, leader: null };
    return {
      lastEpoch,
      leader: { epoch: Number(reply[1]), rev: Number(reply[2]), value: String(reply[3]), ttlMs: Number(reply[4]) },
    };
  }

  /** Shortens `owner`'s hold of `lockKey` to at most `keepMs`; false when it no longer held it. */
  async keepHold(lockKey: string, lockName: string, owner: string, keepMs: number): Promise<boolean> {
    return Number(await this.#runner.run(COMMANDS.keepHold, 'release', lockName, [lockKey, owner, keepMs])) === 1;
  }
}
