import { toLockError, type LockOperation, type ObjectKind } from '../errors.js';
import type { Arg, LuaScript, RedisPort } from '../redis/port.js';
import type { CallRequest } from './request-window.js';

const same = (reply: unknown): unknown => reply;

/** One script as the build makes it (lua.d.ts): a name from its text, its key count (undefined: given per call), its Lua text. */
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

  /**
   * Runs a script; `operation`, `lockName` and its `kind` name what failed, if it fails. A call
   * that changes a lock passes its `request` (request-window.ts), told when it is sent and settled.
   */
  run(command: ScriptCommand, operation: LockOperation, lockName: string | undefined, args: Arg[], kind: ObjectKind = 'lock', request?: CallRequest): Promise<unknown> {
    return this.runAs(command, operation, lockName, args, same, request, kind);
  }

  /**
   * As {@link run}, with the reply turned into `T` by `answer` in the same step (no promise in
   * between: the acquire and release of a lock run on every lock call).
   */
  runAs<T>(
    command: ScriptCommand,
    operation: LockOperation,
    lockName: string | undefined,
    args: Arg[],
    answer: (reply: unknown) => T,
    request?: CallRequest,
    kind: ObjectKind = 'lock',
  ): Promise<T> {
    let reply: Promise<unknown>;
    try {
      request?.sending();
      reply = this.port.runScript(command, args);
    } catch (error) {
      request?.settled();
      return Promise.reject(toLockError(error, operation, lockName, kind));
    }
    if (request === undefined) {
      return reply.then(answer, (error: unknown) => {
        throw toLockError(error, operation, lockName, kind);
      });
    }
    return reply.then(
      (value) => {
        request.settled();
        return answer(value);
      },
      (error: unknown) => {
        request.settled();
        throw toLockError(error, operation, lockName, kind);
      },
    );
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
