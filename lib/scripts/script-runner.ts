import { toLockError, type LockOperation, type ObjectKind } from '../errors.js';
import type { Arg, LuaScript, RedisPort } from '../redis/port.js';

/** One script: a versioned name, its key count (undefined: given per call), its Lua text. */
export type ScriptCommand = LuaScript;

/**
 * Runs rlock's scripts on one connection (see {@link RedisPort.runScript} for how each client
 * sends them). Every failure from Redis or the connection comes out as a LockRedisError naming
 * the lock and the operation.
 */
export class ScriptRunner {
  readonly port: RedisPort;
  /** The client's own key prefix: it prefixes declared keys, so keys passed in ARGV must get it from the caller. */
  readonly keyPrefix: string;

  constructor(port: RedisPort) {
    this.port = port;
    this.keyPrefix = port.keyPrefix;
  }

  /** Runs a script; `operation`, `lockName` and its `kind` name what failed, if it fails. */
  run(command: ScriptCommand, operation: LockOperation, lockName: string | undefined, args: Arg[], kind: ObjectKind = 'lock'): Promise<unknown> {
    let reply: Promise<unknown>;
    try {
      reply = this.port.runScript(command, args);
    } catch (error) {
      return Promise.reject(toLockError(error, operation, lockName, kind));
    }
    return reply.catch((error: unknown) => {
      throw toLockError(error, operation, lockName, kind);
    });
  }

  /**
   * As {@link run}, with the reply turned into `T` by `answer` in the same step (no promise in
   * between: the acquire and release of a lock run on every lock call).
   */
  runAs<T>(command: ScriptCommand, operation: LockOperation, lockName: string | undefined, args: Arg[], answer: (reply: unknown) => T): Promise<T> {
    let reply: Promise<unknown>;
    try {
      reply = this.port.runScript(command, args);
    } catch (error) {
      return Promise.reject(toLockError(error, operation, lockName, 'lock'));
    }
    return reply.then(answer, (error: unknown) => {
      throw toLockError(error, operation, lockName, 'lock');
    });
  }

  /** Runs one plain command (routed by `key` on a Cluster), failures as for {@link run}. */
  async command(args: Arg[], key: string, operation: LockOperation, lockName: string | undefined, kind: ObjectKind = 'lock'): Promise<unknown> {
    try {
      return await this.port.command(args, key);
    } catch (error) {
      throw toLockError(error, operation, lockName, kind);
    }
  }
}
