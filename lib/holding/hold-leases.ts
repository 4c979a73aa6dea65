/** What a hold aborts when it is lost: its Leases' signals. */
export interface HoldLease {
  abort(reason?: unknown): void;
}

/** A hold's Leases until the first one joins (most holds never have one). */
export const NO_LEASES: ReadonlySet<HoldLease> = new Set();

/** Adds a Lease to abort with `hold`'s loss. */
export function addLease(hold: { leases: ReadonlySet<HoldLease> }, lease: HoldLease): void {
  if (hold.leases === NO_LEASES) hold.leases = new Set();
  (hold.leases as Set<HoldLease>).add(lease);
}

/** `lease` is released: the hold's loss no longer concerns it. */
export function removeLease(hold: { leases: ReadonlySet<HoldLease> }, lease: HoldLease): void {
  if (hold.leases !== NO_LEASES) (hold.leases as Set<HoldLease>).delete(lease);
}
