import type { LockWarningInfo } from '../events.js';
import type { RedisPort, ServerNode } from '../redis/port.js';

/** Policies under which Redis may evict a key that has a TTL: every lock key has one. */
const EVICTING = /^(allkeys|volatile)-/;

/** The `maxmemory-policy` of one server. */
export interface ServerPolicy {
  /** `host:port`. */
  readonly server: string;
  readonly policy: string;
  /** `maxmemory` in bytes; 0: no limit set (yet: it can be set at run time). */
  readonly maxmemory: number;
}

/** Reads one server's policy from INFO memory; undefined when it cannot be read (an ACL may forbid INFO). */
async function policyOf(server: ServerNode): Promise<ServerPolicy | undefined> {
  let info: string;
  try {
    info = String(await server.command(['info', 'memory']));
  } catch {
    return undefined;
  }
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined) return undefined;
  return { server: server.address, policy, maxmemory: Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0) };
}

/** The policies of the server behind `redis` (every master of a Cluster) that can be read. */
export async function readEvictionPolicies(redis: RedisPort): Promise<ServerPolicy[]> {
  const policies = await Promise.all((await redis.masters()).map(policyOf));
  return policies.filter((policy): policy is ServerPolicy => policy !== undefined);
}

/** True when `policy` may evict keys that have a TTL (`allkeys-*`, `volatile-*`). */
export function mayEvictLocks(policy: string): boolean {
  return EVICTING.test(policy);
}

/** The warning for a server whose policy may evict lock keys, with the fix. */
export function evictionWarning({ server, policy, maxmemory }: ServerPolicy): LockWarningInfo {
  const limit = maxmemory > 0 ? `maxmemory ${maxmemory} bytes` : 'no maxmemory set now, but one can be set at run time';
  return {
    code: 'RLOCK_EVICTION_POLICY',
    server,
    policy,
    message:
      `Redis at ${server} has maxmemory-policy ${policy} (${limit}): under memory pressure it may evict a held lock's key, ` +
      `and another client then takes the lock while the holder still believes it holds it. ` +
      `Set maxmemory-policy noeviction on this server (CONFIG SET maxmemory-policy noeviction, and in redis.conf), ` +
      `or keep locks on a Redis of their own with noeviction.`,
  };
}

/** Servers already warned about by a process warning: one per server and policy in a process. */
const warnedProcess = new Set<string>();

/**
 * The check a LockClient runs at its first use: reads `maxmemory-policy` (INFO memory; an ACL
 * that forbids it, or any other failure, skips the check quietly) and, where it may evict keys
 * with a TTL, calls `warn` once per server for this client and emits one process warning per
 * server and policy in the process (type `RLockWarning`, code `RLOCK_EVICTION_POLICY`).
 * Returns a function to call at every use; only the first call looks.
 */
export function evictionCheck(redis: RedisPort, warn: (info: LockWarningInfo) => void): (ready: Promise<void>) => void {
  let started = false;
  return (ready) => {
    if (started) return;
    started = true;
    // After the first lock call's own command went out: the check never delays it.
    void ready
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => readEvictionPolicies(redis))
      .then((policies) => {
        for (const server of policies) {
          if (!mayEvictLocks(server.policy)) continue;
          const info = evictionWarning(server);
          warn(info);
          const key = `${server.server}\u0000${server.policy}`;
          if (warnedProcess.has(key)) continue;
          warnedProcess.add(key);
          process.emitWarning(info.message, { type: 'RLockWarning', code: info.code });
        }
      })
      .catch(() => undefined);
  };
}
