import { LockNotHeldError } from '../errors.js';
import { addLease, removeLease, type HoldLease } from '../holding/hold-leases.js';
import type { ReleaseTicket } from '../holding/pending-release.js';
import { LazyAbort, Lease, type LeaseMovesInit } from './lease.js';

/**
 * A Lease of one acquisition: its signal aborts with the hold's loss; `release(ticket)` releases
 * one hold (a retry reuses the ticket, so it is the same release). Releasing a hold that was
 * already lost is no news: the signal and `lost` told it.
 */
export function leaseOfHold(
  name: string,
  owner: string,
  hold: { leases: ReadonlySet<HoldLease> } | undefined,
  token: number | undefined,
  release: (ticket: ReleaseTicket) => Promise<unknown>,
  moves?: LeaseMovesInit,
): Lease {
  const controller = new LazyAbort();
  if (hold) addLease(hold, controller);
  const ticket: ReleaseTicket = hold ? { of: hold } : {};
  return new Lease({
    name,
    owner,
    signal: controller,
    token,
    moves,
    release: async () => {
      if (hold) removeLease(hold, controller);
      try {
        await release(ticket);
      } catch (error) {
        if (controller.aborted && error instanceof LockNotHeldError) return;
        // Not released (refused during a hand-off, or failed): the hold's loss or hand-off still concerns this Lease.
        if (hold) addLease(hold, controller);
        throw error;
      }
    },
  });
}
