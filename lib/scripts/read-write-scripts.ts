import type { ReadWriteKeys } from '../keys.js';
import type { PublishCommand, WaiterMode } from './script-types.js';
import type { ScriptRunner } from './script-runner.js';
import type { CallRequest } from './request-window.js';
import { holdsLeft, writeAcquired, type HoldsLeft, type ScriptStatus } from './script-status.js';
import readAcquire from './read-acquire-3.lua';
import readRelease from './read-release-5.lua';
import readWriteForceUnlock from './read-write-force-unlock-7.lua';
import readWriteState from './read-write-state-2.lua';
import writeAcquire from './write-acquire-3.lua';
import writeRelease from './write-release-7.lua';

/** What a read-write lock looks like to one owner (lib/scripts/read-write-state-2.lua). */
export interface ReadWriteState {
  /** ms left of the write lease; -2 when no writer holds. */
  readonly writeLeftMs: number;
  readonly ownWrites: number;
  /** How many owners hold read holds. */
  readonly readers: number;
  /** ms left of the longest read lease; -2 when no reader holds. */
  readonly readLeftMs: number;
  readonly ownReads: number;
}

/** The read-write lock's scripts: each side's acquire and release, force-unlock, and the state the queries read. */
export class ReadWriteLockScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  /** nil (null) when acquired or re-entered, else ms until the writer's lease ends. */
  async readAcquire(keys: ReadWriteKeys, owner: string, leaseMs: number, clientId: string, mode: WaiterMode, request: CallRequest): Promise<number | null> {
    const args = [keys.lock, keys.readers, keys.read.waiters, owner, leaseMs, clientId, mode, request.id];
    const reply = await this.#runner.run(readAcquire, 'acquire', keys.name, args, 'lock', request);
    return reply === null ? null : Number(reply);
  }
  /** nil (null) when acquired or re-entered, ScriptStatus.UpgradeRefused, else the lock's PTTL (ms). */
  async writeAcquire(
    keys: ReadWriteKeys,
    owner: string,
    leaseMs: number,
    clientId: string,
    mode: WaiterMode,
    request: CallRequest,
  ): Promise<number | null | typeof ScriptStatus.UpgradeRefused> {
    const args = [keys.lock, keys.readers, keys.write.waiters, owner, leaseMs, clientId, mode, request.id];
    return writeAcquired(await this.#runner.run(writeAcquire, 'acquire', keys.name, args, 'lock', request));
  }
  /** The owner's remaining read hold count, or ScriptStatus.NotHeld (see {@link release}). */
  async readRelease(keys: ReadWriteKeys, owner: string, reExpireMs: number, request: CallRequest, publish: PublishCommand, recordMs: number): Promise<HoldsLeft> {
    const { lock, readers, write, records } = keys;
    const args = [lock, readers, write.waiters, write.wakePrefix, records, owner, reExpireMs, request.id, publish, recordMs];
    return holdsLeft(await this.#runner.run(readRelease, 'release', keys.name, args, 'lock', request));
  }
  /** The owner's remaining write hold count, or ScriptStatus.NotHeld (see {@link release}). */
  async writeRelease(keys: ReadWriteKeys, owner: string, reExpireMs: number, request: CallRequest, publish: PublishCommand, recordMs: number): Promise<HoldsLeft> {
    const args = [...readWriteKeyList(keys), owner, reExpireMs, request.id, publish, recordMs];
    return holdsLeft(await this.#runner.run(writeRelease, 'release', keys.name, args, 'lock', request));
  }
  /** Deletes the lock if held in `mode`; true if it was. Once per `request`. */
  async forceUnlock(keys: ReadWriteKeys, mode: 'read' | 'write', publish: PublishCommand, request: CallRequest): Promise<boolean> {
    const args = [...readWriteKeyList(keys), mode, publish, request.id];
    return Number(await this.#runner.run(readWriteForceUnlock, 'forceUnlock', keys.name, args, 'lock', request)) === 1;
  }
  async state(keys: ReadWriteKeys, owner: string): Promise<ReadWriteState> {
    const reply = (await this.#runner.run(readWriteState, 'query', keys.name, [keys.lock, keys.readers, owner])) as unknown[];
    const [writeLeftMs, ownWrites, readers, readLeftMs, ownReads] = reply.map(Number) as [number, number, number, number, number];
    return { writeLeftMs, ownWrites, readers, readLeftMs, ownReads };
  }
}

/** KEYS of the read-write scripts that may wake both readers and writers, then the record prefix. */
function readWriteKeyList(keys: ReadWriteKeys): string[] {
  const { lock, readers, read, write, records } = keys;
  return [lock, readers, read.waiters, read.wakePrefix, write.waiters, write.wakePrefix, records];
}
