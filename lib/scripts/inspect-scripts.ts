import type { InspectKeys } from '../keys.js';
import type { ScriptRunner } from './script-runner.js';
import inspectLock from './inspect-lock-7.lua';

/** At most this many entries of each set come back from one look (their counts are exact). */
export const INSPECT_LIMIT = 1_000;

/** What the inspect script answered, decoded. */
export interface RawLockState {
  readonly nowMs: number;
  readonly pttl: number;
  readonly fields: ReadonlyMap<string, string>;
  /** owner → end of its read lease, server ms (live ones). */
  readonly readers: readonly (readonly [string, number])[];
  readonly waiters: readonly (readonly [string, number])[];
  readonly readWaiters: readonly (readonly [string, number])[];
  /** waiter id → ticket, head first (live ones). */
  readonly queue: readonly (readonly [string, number])[];
  readonly tokenCounter: number | null;
  readonly readerCount: number;
  readonly waiterCount: number;
  readonly readWaiterCount: number;
  readonly queueCount: number;
}


function pairs(flat: unknown): [string, number][] {
  const list = flat as string[];
  const out: [string, number][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([String(list[i]), Number(list[i + 1])]);
  return out;
}

/** The read-only script of `rlock inspect` and of the holder and queue queries (inspect-lock-7.lua). */
export class InspectScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  /**
   * One call (one round trip, on the lock's node of a Cluster): every key of the lock. A failure
   * from Redis comes out as a LockRedisError (`operation: 'query'`).
   */
  async read(keys: InspectKeys, limit = INSPECT_LIMIT): Promise<RawLockState> {
    const { lock, waiters, readWaiters, queue, queueTimeouts, readers, token } = keys;
    const args = [lock, waiters, readWaiters, queue, queueTimeouts, readers, token, limit];
    return decodeLockState((await this.#runner.run(inspectLock, 'query', keys.name, args)) as unknown[]);
  }
}

function decodeLockState(reply: unknown[]): RawLockState {
  const [nowMs, pttl, fields, readers, waiters, readWaiters, queue, token, readerCount, waiterCount, readWaiterCount, queueCount] = reply;
  const flat = fields as string[];
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(String(flat[i]), String(flat[i + 1]));
  return {
    nowMs: Number(nowMs),
    pttl: Number(pttl),
    fields: map,
    readers: pairs(readers),
    waiters: pairs(waiters),
    readWaiters: pairs(readWaiters),
    queue: pairs(queue),
    tokenCounter: token === null || token === undefined ? null : Number(token),
    readerCount: Number(readerCount),
    waiterCount: Number(waiterCount),
    readWaiterCount: Number(readWaiterCount),
    queueCount: Number(queueCount),
  };
}

