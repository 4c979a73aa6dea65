import { granted } from './lost-attempt.js';
import type { LockCore } from '../core.js';
import { LockUpgradeError } from '../errors.js';
import type { WaitTarget } from '../keys.js';
import { ScriptStatus, type HoldsLeft, type ReadWriteState, type WaiterMode } from '../scripts/registry.js';
import { ReadWriteSide } from './read-write-side.js';
import type { HeldRequest } from '../scripts/registry.js';

/**
 * The write side of a read-write lock: one owner, while no other owner reads. The writer may
 * also take the read lock. An owner holding only the read lock is refused with a
 * LockUpgradeError at once: it would wait for itself.
 */
export class WriteLock extends ReadWriteSide {
  constructor(core: LockCore, name: unknown) {
    super(core, name, 'write');
  }

  protected override get waitTarget(): WaitTarget {
    return this.rwKeys.write;
  }

  protected override async attempt(owner: string, ttlMs: number, mode: WaiterMode): Promise<number | null> {
    const { core } = this;
    const reply = await this.requestAttempt(owner, ttlMs, (request) => core.scripts.readWrite.writeAcquire(this.rwKeys, owner, ttlMs, core.waiters.listenerId, mode, request), granted);
    if (reply === ScriptStatus.UpgradeRefused) {
      throw new LockUpgradeError(
        `the current owner holds the read lock of "${this.name}" and asked for its write lock: it would wait for ` +
          'itself. Unlock the read lock first, or take the write lock first (a writer may also read)',
        { lockName: this.name },
      );
    }
    return reply;
  }

  protected override releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<HoldsLeft> {
    const { core } = this;
    return this.request(owner, (request) => core.scripts.readWrite.writeRelease(this.rwKeys, owner, reExpireMs, request, core.publish, recordMs), held);
  }

  protected override view(state: ReadWriteState): { holdCount: number; locked: boolean; ttlMs: number } {
    return { holdCount: state.ownWrites, locked: state.writeLeftMs !== -2, ttlMs: state.writeLeftMs };
  }
}
