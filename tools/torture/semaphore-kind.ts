// The torture tool's `semaphore` kind, worker side: each operation takes 1 to SEMAPHORE_LIMIT
// permits of one of a few semaphores (fair ones under their own names: a non-fair object on a
// fair name would overtake its queue), through an adapter that makes a Permit look like the
// Lease the worker's loop reports on (owner = the permit id).
import type { Lease, LockClient, LockWaitOptions, RLock } from '../../lib/index.js';
import type { Prng } from './schedule.js';

/** The limit of every torture semaphore. */
export const SEMAPHORE_LIMIT = 3;

export interface SemaphoreTarget {
  readonly name: string;
  readonly permits: number;
  readonly lock: RLock;
}

/** Mostly single permits, sometimes 2, sometimes the whole limit. */
function drawPermits(rng: Prng): number {
  const roll = rng.int(0, 99);
  return roll < 60 ? 1 : roll < 85 ? 2 : SEMAPHORE_LIMIT;
}

export function semaphoreTarget(client: LockClient, rng: Prng): SemaphoreTarget {
  const fair = rng.chance(0.4);
  const name = `${fair ? 'sem-fair' : 'sem'}-${rng.int(0, 1)}`;
  const permits = drawPermits(rng);
  const semaphore = client.getSemaphore(name, { permits: SEMAPHORE_LIMIT, fair });
  const lock = {
    async acquire(options: LockWaitOptions): Promise<Lease> {
      const permit = await semaphore.acquire({ ...options, permits });
      const lease = { owner: permit.id, token: undefined, signal: permit.signal, release: () => permit.release() };
      return lease as unknown as Lease;
    },
  };
  // Only `acquire` is called on a semaphore target (it is never re-entered).
  return { name, permits, lock: lock as unknown as RLock };
}
