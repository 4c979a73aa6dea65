import type { LockHolder } from './types.js';

/**
 * A RedLock's holders, the majority view: the owners that hold the lock on at least `quorum` of
 * the nodes that answered. `holdCount` is the count a majority has (the quorum-th highest), and
 * `ttl` how long a majority still has the lock (the quorum-th longest TTL), as `getHoldCount`
 * and `remainTimeToLive` count them. A minority holder (a failed round not yet undone, or a
 * node that kept an old key) is left out: it does not hold the RedLock.
 */
export function majorityHolders(perNode: readonly (readonly LockHolder[])[], quorum: number): LockHolder[] {
  const byOwner = new Map<string, LockHolder[]>();
  for (const holders of perNode) {
    for (const holder of holders) {
      const list = byOwner.get(holder.owner);
      if (list) list.push(holder);
      else byOwner.set(holder.owner, [holder]);
    }
  }
  const result: LockHolder[] = [];
  for (const [owner, holds] of byOwner) {
    if (holds.length < quorum) continue;
    const nth = (values: number[]): number => values.sort((a, b) => b - a)[quorum - 1]!;
    // -1 (no TTL) lasts longest.
    const ttls = holds.map((hold) => (hold.ttl === -1 ? Infinity : hold.ttl));
    const ttl = nth(ttls);
    result.push({ owner, holdCount: nth(holds.map((hold) => hold.holdCount)), ttl: ttl === Infinity ? -1 : ttl });
  }
  return result;
}

/** A MultiLock's holders: each member's holders, tagged with the member's name (`lock`). */
export function memberHolders(members: readonly { readonly name: string }[], perMember: readonly (readonly LockHolder[])[]): LockHolder[] {
  return perMember.flatMap((holders, i) => holders.map((holder) => ({ ...holder, lock: members[i]!.name })));
}
