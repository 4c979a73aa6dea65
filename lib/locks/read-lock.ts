import { granted } from './lost-attempt.js';
import type { LockCore } from '../core.js';
import type { WaitTarget } from '../keys.js';
import type { ReadWriteState, WaiterMode, HoldsLeft } from '../scripts/registry.js';
import { ReadWriteSide } from './read-write-side.js';
import type { HeldRequest } from '../scripts/registry.js';

/**
 * The read side of a read-write lock: shared by any number of owners while no other owner
 * writes. Each reader has its own lease; a write release wakes every waiting reader at once.
 */
export class ReadLock extends ReadWriteSide {
  constructor(core: LockCore, name: unknown) {
    super(core, name, 'read');
  }

  protected override get waitTarget(): WaitTarget {
    return this.rwKeys.read;
  }

  protected override attempt(owner: string, ttlMs: number, mode: WaiterMode): Promise<number | null> {
    const { core } = this;
    return this.requestAttempt(owner, ttlMs, (request) => core.scripts.readWrite.readAcquire(this.rwKeys, owner, ttlMs, core.waiters.listenerId, mode, request), granted);
  }

  protected override releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<HoldsLeft> {
    const { core } = this;
    return this.request(owner, (request) => core.scripts.readWrite.readRelease(this.rwKeys, owner, reExpireMs, request, core.publish, recordMs), held);
  }

  protected override view(state: ReadWriteState): { holdCount: number; locked: boolean; ttlMs: number } {
    return { holdCount: state.ownReads, locked: state.readers > 0, ttlMs: state.readLeftMs };
  }
}
