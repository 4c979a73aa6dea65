import type { LockCore } from '../core.js';
import { checkLockName } from '../validate.js';
import { ReadLock } from './read-lock.js';
import type { RLock, RReadWriteLock } from './lock-interfaces.js';
import { WriteLock } from './write-lock.js';

/** A read-write lock: its two sides share one hash (see lib/scripts/read-write-holds.lua). */
export class ReadWriteLock implements RReadWriteLock {
  readonly name: string;
  readonly #read: ReadLock;
  readonly #write: WriteLock;

  constructor(core: LockCore, name: unknown) {
    this.name = checkLockName(name);
    this.#read = new ReadLock(core, this.name);
    this.#write = new WriteLock(core, this.name);
  }

  readLock(): RLock {
    return this.#read;
  }

  writeLock(): RLock {
    return this.#write;
  }
}
