import { randomUUID } from 'node:crypto';
import { Lease, RESERVE_HAND_OFF } from './lease.js';
import type { LeaseHandle } from './lease-handle.js';
import type { HandOffOptions, HandOffReservation } from './lease-moves.js';

/** Reserves every member's hand-off, or none: one refused cancels those reserved before it. */
function reserveAll(leases: Lease[], options: HandOffOptions | undefined): HandOffReservation[] {
  const reserved: HandOffReservation[] = [];
  try {
    for (const lease of leases) {
      const reserve = (lease as Partial<Pick<Lease, typeof RESERVE_HAND_OFF>>)[RESERVE_HAND_OFF];
      reserved.push(reserve ? reserve.call(lease, options) : { send: () => lease.handOff(options), cancel: () => undefined });
    }
  } catch (error) {
    for (const reservation of reserved) reservation.cancel();
    throw error;
  }
  return reserved;
}

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
      // Every member's hand-off is checked and reserved before any is sent: a member that cannot be
      // handed off now (a call of its owner under way, a release retried) refuses the whole. A
      // member whose hand-off fails once sent stays held here (this Lease's release lets go of
      // it); the others are handed off, and end with their gap if nobody adopts them.
      handOff: async (options?: HandOffOptions): Promise<LeaseHandle> => {
        const members = await Promise.all(reserveAll(leases, options).map((reservation) => reservation.send()));
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
