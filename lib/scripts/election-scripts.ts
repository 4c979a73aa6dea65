import type { ElectionKeys } from '../keys.js';
import type { PublishCommand, WaiterMode } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import type { CallRequest } from './request-window.js';
import { holdsLeft, ScriptStatus, type HoldsLeft, type NotHeld } from './script-status.js';
import electionCampaign from './election-campaign-4.lua';
import electionProclaim from './election-proclaim-2.lua';
import electionResign from './election-resign-5.lua';
import electionState from './election-state-2.lua';
import keepHold from './keep-hold-1.lua';

/** What one read of an election says (election-state-2.lua). */
export interface ElectionState {
  /** The last epoch ever given for this name (0: never). */
  readonly lastEpoch: number;
  /** The leader now, if any. */
  readonly leader: { readonly epoch: number; readonly rev: number; readonly value: string; readonly ttlMs: number } | null;
}

/** The scripts of elections and of runExclusive. */
export class ElectionScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
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
    const reply = await this.#runner.run(electionCampaign, 'acquire', keys.name, args, 'lock', request);
    return Array.isArray(reply) ? { epoch: Number(reply[0]) } : { ttlMs: Number(reply) };
  }

  /** The holds `owner` has left (0: stepped down), or ScriptStatus.NotHeld. */
  async resign(keys: ElectionKeys, owner: string, reExpireMs: number, request: CallRequest, publish: PublishCommand, recordMs: number): Promise<HoldsLeft> {
    const args = [keys.election, keys.wait.waiters, keys.wait.wakePrefix, keys.records, keys.changes, owner, reExpireMs, request.id, publish, recordMs];
    return holdsLeft(await this.#runner.run(electionResign, 'release', keys.name, args, 'lock', request));
  }

  /** The proclaim count of the epoch after this one, or ScriptStatus.NotHeld when `owner` does not lead. */
  async proclaim(keys: ElectionKeys, owner: string, request: CallRequest, value: string, publish: PublishCommand): Promise<number | NotHeld> {
    const args = [keys.election, keys.changes, owner, request.id, value, publish];
    const rev = Number(await this.#runner.run(electionProclaim, 'acquire', keys.name, args, 'lock', request));
    return rev === -1 ? ScriptStatus.NotHeld : rev;
  }

  async state(keys: ElectionKeys): Promise<ElectionState> {
    const reply = (await this.#runner.run(electionState, 'query', keys.name, [keys.election, keys.epoch])) as unknown[];
    const lastEpoch = Number(reply[0]);
    if (reply[1] === null || reply[1] === false || reply[1] === undefined) return { lastEpoch, leader: null };
    return {
      lastEpoch,
      leader: { epoch: Number(reply[1]), rev: Number(reply[2]), value: String(reply[3]), ttlMs: Number(reply[4]) },
    };
  }

  /** Shortens `owner`'s hold of `lockKey` to at most `keepMs`; false when it no longer held it. */
  async keepHold(lockKey: string, lockName: string, owner: string, keepMs: number): Promise<boolean> {
    return Number(await this.#runner.run(keepHold, 'release', lockName, [lockKey, owner, keepMs])) === 1;
  }
}
