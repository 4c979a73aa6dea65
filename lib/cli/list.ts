import type { LockScripts } from '../scripts/registry.js';
import type { RedisPort, ServerNode } from '../redis/port.js';
import { inspectLock } from '../inspect/inspect.js';
import { clientIdsOf, readIdentities, withProcesses } from '../inspect/identities.js';
import type { ProcessIdentity } from '../inspect/types.js';

/** One row of `rlock list`. */
export interface ListedLock {
  readonly name: string;
  /** A lock kind, or `semaphore` / `latch` / `election` for rlock's other objects under the prefix. */
  readonly kind: string;
  /** How many owners hold it (0: free; an election: 1 while it has a leader); undefined for a semaphore or latch. */
  readonly holders: number | undefined;
  /** The lock's TTL, ms (-2 free, -1 no TTL). */
  readonly ttl: number | undefined;
  /** Waiting calls (fair queue) or clients (the others). */
  readonly waiting: number | undefined;
  /** A lock's holders' processes, in holder order (null: unknown); undefined for other objects. */
  readonly heldBy?: readonly (ProcessIdentity | null)[];
  /** A lock's waiters' processes (fair queue head first, then waiting clients); undefined for other objects. */
  readonly waitedBy?: readonly (ProcessIdentity | null)[];
}

/** What follows the `{prefix:name}` hash tag in rlock's keys (lib/keys.ts). */
const SUFFIX = /^(|:waiters|:read-waiters|:queue|:timeouts|:readers|:token|:rec:[^}]*|:semaphore(:[a-z-]+)?|:latch(:[a-z-]+)?|:election(:epoch|:waiters|:wake:[^}]*|:rec:[^}]*)?)$/;

/** Escapes glob metacharacters for SCAN MATCH. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** The lock name and key suffix of one of rlock's keys under `keyPrefix`, or undefined. */
export function parseKey(key: string, keyPrefix: string): { name: string; suffix: string } | undefined {
  const start = `{${keyPrefix}:`;
  if (!key.startsWith(start)) return undefined;
  for (let end = key.lastIndexOf('}'); end > start.length; end = key.lastIndexOf('}', end - 1)) {
    const suffix = key.slice(end + 1);
    if (SUFFIX.test(suffix)) return { name: key.slice(start.length, end), suffix };
  }
  return undefined;
}

/** SCANs one node for `pattern` (never KEYS), bounded by what the node holds. */
async function scanNode(node: ServerNode, pattern: string, into: Set<string>): Promise<void> {
  let cursor = '0';
  do {
    const [next, batch] = (await node.command(['scan', cursor, 'MATCH', pattern, 'COUNT', 1_000])) as [string, string[]];
    cursor = String(next);
    for (const key of batch) into.add(key);
  } while (cursor !== '0');
}

/**
 * The locks (and semaphores, latches) under `keyPrefix` whose name matches the glob `match`:
 * SCAN on the server, or on every master of a Cluster, keys grouped by lock, then one look at
 * each lock. Sorted by name.
 */
export async function listLocks(redis: RedisPort, scripts: LockScripts, keyPrefix: string, match: string): Promise<ListedLock[]> {
  const pattern = `{${globEscape(keyPrefix)}:${match}}*`;
  const keys = new Set<string>();
  await Promise.all((await redis.masters()).map((node) => scanNode(node, pattern, keys)));
  const suffixes = new Map<string, Set<string>>();
  for (const key of keys) {
    const parsed = parseKey(key, keyPrefix);
    if (!parsed) continue;
    let set = suffixes.get(parsed.name);
    if (!set) suffixes.set(parsed.name, (set = new Set()));
    set.add(parsed.suffix.startsWith(':rec:') ? ':rec:' : parsed.suffix.startsWith(':election:') ? ':election:' : parsed.suffix);
  }
  const names = [...suffixes.keys()].sort();
  const listed: ListedLock[] = [];
  // One look per lock, 50 at a time, then one read of the processes of their holders and waiters.
  for (let i = 0; i < names.length; i += 50) {
    const batch = names.slice(i, i + 50);
    const views = await Promise.all(batch.map((name) => inspectLock(scripts.inspect, keyPrefix, name)));
    const identities = await readIdentities(scripts, keyPrefix, views.flatMap((view) => (view ? clientIdsOf(view) : [])));
    batch.forEach((name, j) => {
      const seen = views[j];
      if (seen) {
        const view = withProcesses(seen, identities);
        const waiting = view.kind === 'fair' ? view.queueLength : view.waitingClientCount + view.waitingReaderCount;
        const heldBy = view.holders.map((h) => h.process ?? null);
        const waitedBy = [...view.queue, ...view.waitingClients, ...view.waitingReaders].map((w) => w.process ?? null);
        listed.push({ name, kind: view.kind, holders: view.holders.length, ttl: view.ttl, waiting, heldBy, waitedBy });
        return;
      }
      const found = [...suffixes.get(name)!];
      if (found.some((s) => s.startsWith(':election'))) {
        // The election hash exists while someone leads; the epoch counter outlives every leader.
        listed.push({ name, kind: 'election', holders: found.includes(':election') ? 1 : 0, ttl: undefined, waiting: undefined });
        return;
      }
      const other = found.some((s) => s.startsWith(':semaphore')) ? 'semaphore' : found.some((s) => s.startsWith(':latch')) ? 'latch' : undefined;
      if (other) listed.push({ name, kind: other, holders: undefined, ttl: undefined, waiting: undefined });
    });
  }
  return listed;
}
