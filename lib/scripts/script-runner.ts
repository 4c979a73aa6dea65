import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { toLockError, type LockOperation } from '../errors.js';

/** A connection rlock sends commands on: a standalone ioredis client or a Cluster. */
export type RedisConnection = Redis | Cluster;

/** One script as ioredis defines it: a versioned command name, its key count (undefined: given per call), its Lua text. */
export interface ScriptCommand {
  readonly name: string;
  readonly numberOfKeys: number | undefined;
  readonly lua: string;
}

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/** SHA1 of each script's text, computed once per process. */
const shas = new WeakMap<ScriptCommand, string>();
function shaOf(command: ScriptCommand): string {
  let sha = shas.get(command);
  if (sha === undefined) {
    sha = createHash('sha1').update(command.lua).digest('hex');
    shas.set(command, sha);
  }
  return sha;
}

/** The reply of command `index` of a pipeline, or its error thrown. */
export function replyOf(replies: [Error | null, unknown][] | null, index: number): unknown {
  const entry = replies?.[index];
  if (!entry) throw new Error('rlock: the pipeline returned no reply');
  if (entry[0]) throw entry[0];
  return entry[1];
}

/**
 * Runs rlock's scripts on one connection. The first call of a script goes through its ioredis
 * `defineCommand` (which sends its text, EVAL, on a connection that has not sent it yet); later
 * calls are a plain EVALSHA, the cheapest way through ioredis (no wrapper promise or command
 * subclass per call). On NOSCRIPT (a restart, a failover, SCRIPT FLUSH) the call is sent again
 * through the defined command. Pipelines use the defined commands directly. Every failure from Redis or the connection
 * comes out as a LockRedisError naming the lock and the operation.
 */
export class ScriptRunner {
  readonly redis: RedisConnection;
  /** ioredis' own `keyPrefix`: it prefixes KEYS, so keys passed in ARGV must get it from the caller. */
  readonly keyPrefix: string;
  /** Scripts this runner has run once: sent by EVALSHA from then on. */
  readonly #sent = new Set<ScriptCommand>();

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

  /** Runs a defined script; `lockName` and `operation` name what failed, if it fails. */
  async run(command: ScriptCommand, operation: LockOperation, lockName: string | undefined, args: (string | number)[]): Promise<unknown> {
    const fn = (this.redis as unknown as Record<string, ScriptCall>)[command.name];
    if (!fn) throw new Error(`rlock script ${command.name} is not defined on this connection`);
    if (this.#sent.has(command)) {
      try {
        const sha = shaOf(command);
        return await (command.numberOfKeys === undefined
          ? this.redis.evalsha(sha, ...(args as [number, ...(string | number)[]]))
          : this.redis.evalsha(sha, command.numberOfKeys, ...args));
      } catch (error) {
        if (!isNoScript(error)) throw toLockError(error, operation, lockName);
      }
    }
    // First call, or not in the server's script cache: the defined command sends the text.
    try {
      const reply = await fn.apply(this.redis, args);
      this.#sent.add(command);
      return reply;
    } catch (error) {
      throw toLockError(error, operation, lockName);
    }
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
