import type { LockCore } from '../core.js';
import { readWriteKeys, type ReadWriteKeys, type WaitTarget } from '../keys.js';
import type { ReadWriteState, WaiterMode } from '../scripts/registry.js';
import type { Acquired, AttemptResult } from '../waiting/wait.js';
import type { RenewTarget } from '../holding/holds.js';
import { BaseLock } from './base-lock.js';
import { waitNonFair } from '../waiting/non-fair-wait.js';
import { KINDS } from '../kinds.js';

/** One side of a read-write lock (layout: lib/scripts/read-write-holds.lua). */
export abstract class ReadWriteSide extends BaseLock {
  protected readonly rwKeys: ReadWriteKeys;
  readonly #mode: 'read' | 'write';

  protected constructor(core: LockCore, name: unknown, mode: 'read' | 'write') {
    super(core, name, mode);
    this.#mode = mode;
    this.rwKeys = readWriteKeys(core.keyPrefix, this.name);
  }

  /** One attempt of this side's acquire script: null when acquired, else its status or wait. */
  protected abstract attempt(owner: string, ttlMs: number, mode: WaiterMode): Promise<number | null>;

  /** What this side's queries read from the lock's state. */
  protected abstract view(state: ReadWriteState): { holdCount: number; locked: boolean; ttlMs: number };

  /** Where this side's waiters wait. */
  protected abstract get waitTarget(): WaitTarget;

  protected override acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false> {
    const ttlMs = this.ttlFor(leaseMs);
    return waitNonFair(this.core, this.waitTarget, waitMs, signal, async (mode): Promise<AttemptResult> => {
      const sentAt = performance.now();
      const reply = await this.attempt(owner, ttlMs, mode);
      return reply === null ? { acquired: true, sentAt } : { acquired: false, ttlMs: reply };
    }, () => this.abandon(owner));
  }

  protected override renewTarget(owner: string): RenewTarget {
    const { lock, readers } = this.rwKeys;
    return { name: this.name, script: KINDS[this.#mode].renew, keys: [lock, readers], holder: `${this.#mode[0]}:${owner}` };
  }

  /** Deletes the lock if it is held in this side's mode (a writer's own read holds go with it). */
  override async forceUnlock(): Promise<boolean> {
    await this.open();
    return this.request(undefined, (request) => this.core.scripts.readWrite.forceUnlock(this.rwKeys, this.#mode, this.core.publish, request));
  }

  /** True while some owner holds this side. */
  override async isLocked(): Promise<boolean> {
    return (await this.#view()).locked;
  }

  override async getHoldCount(): Promise<number> {
    return (await this.#view()).holdCount;
  }

  override async holdCountOf(owner: string): Promise<number> {
    await this.open();
    return this.view(await this.core.scripts.readWrite.state(this.rwKeys, owner)).holdCount;
  }

  /** ms until this side's longest lease ends; -2 when nobody holds it. */
  override async remainTimeToLive(): Promise<number> {
    return (await this.#view()).ttlMs;
  }

  async #view(): Promise<{ holdCount: number; locked: boolean; ttlMs: number }> {
    await this.open();
    // With no current owner (outside a context, no unscoped hold; a context that handed its hold
    // off) the counts are 0, and the rest still describes the lock.
    const state = await this.core.scripts.readWrite.state(this.rwKeys, this.currentOwner() ?? '');
    return this.view(state);
  }
}
