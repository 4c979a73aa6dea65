import type { LockCore } from '../core.js';
import { toLockError, type LockOperation } from '../errors.js';
import { inspectKeys } from '../keys.js';
import { KINDS, type HoldKind } from '../kinds.js';
import type { LockHolder } from '../inspect/types.js';
import { lockKeys, type LockKeys } from '../keys.js';
import { checkLockName } from '../validate.js';

/**
 * A lock's name, keys and client, and the read-only calls on it: what every kind answers
 * without acquiring or releasing. BaseLock (acquire, release, holds) builds on it.
 */
export abstract class LockQueries {
  readonly name: string;
  protected readonly core: LockCore;
  protected readonly keys: LockKeys;

  protected constructor(
    core: LockCore,
    name: unknown,
    /** Its row of KINDS. */
    protected readonly kind: HoldKind,
  ) {
    this.name = checkLockName(name);
    this.core = core;
    this.keys = lockKeys(core.keyPrefix, this.name);
  }

  async isLocked(): Promise<boolean> {
    await this.open();
    return Number(await this.query(this.core.redis.command(['exists', this.keys.lock], this.keys.lock))) === 1;
  }

  async remainTimeToLive(): Promise<number> {
    await this.open();
    return Number(await this.query(this.core.redis.command(['pttl', this.keys.lock], this.keys.lock)));
  }

  async getHolders(): Promise<LockHolder[]> {
    await this.open();
    // The kind's inspect probe (a read-write side reads its own side's holders).
    const probe = KINDS[this.kind].holders;
    return probe ? probe(this.core.scripts.inspect, inspectKeys(this.core.keyPrefix, this.name)) : [];
  }

  /** `owner`'s hold count of this lock, 0 if none. */
  async holdCountOf(owner: string): Promise<number> {
    await this.open();
    return Number((await this.query(this.core.redis.command(['hget', this.keys.lock, owner], this.keys.lock))) ?? 0);
  }

  /** A read-only call's answer; a failure from Redis as a LockRedisError. */
  protected async query<T>(call: Promise<T>, operation: LockOperation = 'query'): Promise<T> {
    try {
      return await call;
    } catch (error) {
      throw toLockError(error, operation, this.name);
    }
  }

  /** Throws once the client is closed; waits until the client knows its topology. */
  protected async open(): Promise<void> {
    await this.opening();
  }

  /**
   * Throws once the client is closed; what to wait for until the client knows its topology, or
   * undefined when it does (the hot paths then await nothing).
   */
  protected opening(): Promise<void> | undefined {
    this.core.assertOpen();
    return this.core.ready();
  }
}
