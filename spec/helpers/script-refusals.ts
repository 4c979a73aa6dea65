import type { Redis } from 'ioredis';
import { until } from './fixtures.js';

/**
 * An ACL user of its own for the LockClient under test, whose right to run scripts a spec takes
 * away and gives back through an admin connection: while it has none, Redis refuses every rlock
 * call of that client (NOPERM) before running it. Redis counts the refusals (INFO errorstats),
 * which tells a spec when a background retry of rlock's was refused.
 */
export interface ScriptRefusals {
  /** `redis://<user>:<password>@127.0.0.1:<port>`: a connection as the user. */
  url(port: number): string;
  /** Creates the user (idempotent): every command, key and channel, scripts allowed. */
  create(): Promise<void>;
  /** From now on Redis refuses the user's scripts (EVAL, EVALSHA, ...), on open connections too. */
  refuse(): Promise<void>;
  /** Scripts are allowed again. */
  allow(): Promise<void>;
  /** NOPERM refusals on the server so far (any user). */
  count(): Promise<number>;
  /** Resolves once the server refused `count` calls in all (polled every 5 ms). */
  reach(count: number, timeoutMs?: number): Promise<void>;
}

export function scriptRefusals(admin: () => Redis, user: string, password = `${user}-pw`): ScriptRefusals {
  const count = async (): Promise<number> => {
    const info = await admin().info('errorstats');
    return Number(/^errorstat_NOPERM:count=(\d+)/m.exec(info)?.[1] ?? 0);
  };
  return {
    url: (port) => `redis://${user}:${password}@127.0.0.1:${port}`,
    create: async () => {
      await admin().call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
    },
    refuse: async () => {
      await admin().call('ACL', 'SETUSER', user, '-@scripting');
    },
    allow: async () => {
      await admin().call('ACL', 'SETUSER', user, '+@scripting');
    },
    count,
    reach: (target, timeoutMs = 5_000) => until(async () => (await count()) >= target, timeoutMs),
  };
}
