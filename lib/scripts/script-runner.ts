import type { Cluster, Redis } from 'ioredis';
import { toLockError, type LockOperation, type ObjectKind } from '../errors.js';

/** A connection rlock sends commands on: a standalone ioredis client or a Cluster. */
export type RedisConnection = Redis | Cluster;

/** One script as ioredis defines it: a versioned command name, its key count (undefined: given per call), its Lua text. */
export interface ScriptCommand {
  readonly name: string;
  readonly numberOfKeys: number | undefined;
  readonly lua: string;
}

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/** The reply of command `index` of a pipeline, or its error thrown. */
export function replyOf(replies: [Error | null, unknown][] | null, index: number): unknown {
  const entry = replies?.[index];
  if (!entry) throw new Error('rlock: the pipeline returned no reply');
  if (entry[0]) throw entry[0];
  return entry[1];
}

/**
 * Runs rlock's scripts on one connection, through their ioredis `defineCommand`: ioredis decides
 * EVAL or EVALSHA when it writes the call, per socket (the text the first time on a socket, the
 * SHA after), so calls queued or resent across a reconnect (a restarted server has an empty script
 * cache) stay in the order they were made. A plain EVALSHA sent by the caller would be refused
 * there (NOSCRIPT) and sent again behind later calls. Every failure from Redis or the connection
 * comes out as a LockRedisError naming the lock and the operation.
 */
export class ScriptRunner {
  readonly redis: RedisConnection;
  /** ioredis' own `keyPrefix`: it prefixes KEYS, so keys passed in ARGV must get it from the caller. */
  readonly keyPrefix: string;

  constructor(redis: RedisConnection, connectionKeyPrefix: string) {
    this.redis = redis;
    this.keyPrefix = connectionKeyPrefix;
  }

  /** Defines the scripts of one kind on the connection (once: another client may have already). */
  define(commands: Readonly<Record<string, ScriptCommand>>): void {
    for (const { name, numberOfKeys, lua } of Object.values(commands)) {
      if (typeof (this.redis as unknown as Record<string, unknown>)[name] !== 'function') {
        this.redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
      }
    }
  }

  /** Runs a defined script; `operation`, `lockName` and its `kind` name what failed, if it fails. */
  async run(
    command: ScriptCommand,
    operation: LockOperation,
    lockName: string | undefined,
    args: (string | number)[],
    kind: ObjectKind = 'lock',
  ): Promise<unknown> {
    const fn = (this.redis as unknown as Record<string, ScriptCall>)[command.name];
    if (!fn) throw new Error(`rlock script ${command.name} is not defined on this connection`);
    try {
      return await fn.apply(this.redis, args);
    } catch (error) {
      throw toLockError(error, operation, lockName, kind);
    }
  }
}
