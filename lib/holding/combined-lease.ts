import { randomUUID } from 'node:crypto';
import { Lease } from './lease.js';
import type { LeaseHandle } from './lease-handle.js';
import type { HandOffOptions } from './lease-moves.js';

/**
 * One Lease over several (a MultiLock's members): its signal aborts when any member's does;
 * release, extend and handOff apply to every member. A hand-off carries one handle per member.
 */
export function combineLeases(name: string, leases: Lease[]): Lease {
  const controller = new AbortController();
  const onLost = (event: Event): void => controller.abort((event.target as AbortSignal).reason);
  for (const lease of leases) {
    if (lease.signal.aborted) controller.abort(lease.signal.reason);
    else lease.signal.addEventListener('abort', onLost, { once: true });
  }
  const settled = async (calls: Promise<unknown>[]): Promise<void> => {
    const failure = (await Promise.allSettled(calls)).find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  };
  return new Lease({
    name,
    owner: leases[0]!.owner,
    signal: controller.signal,
    release: async () => {
      for (const lease of leases) lease.signal.removeEventListener('abort', onLost);
      await settled(leases.map((lease) => lease.release()));
    },
    moves: {
      extend: (ms) => settled(leases.map((lease) => lease.extend(ms))),
      // A member whose hand-off failed stays held here (this Lease's release lets go of it); the
      // others are handed off, and end with their gap if nobody adopts them.
      handOff: async (options?: HandOffOptions): Promise<LeaseHandle> => {
        const members = await Promise.all(leases.map((lease) => lease.handOff(options)));
        const first = members[0]!;
        return {
          rlock: 1,
          kind: 'multi',
          name,
          keyPrefix: first.keyPrefix,
          owner: first.owner,
          id: randomUUID(),
          holdCount: 1,
          leaseTime: first.leaseTime,
          expiresAt: Math.min(...members.map((member) => member.expiresAt)),
          members,
        };
      },
    },
  });
}
