import type { HoldsLeft } from '../scripts/registry.js';
import type { ReleaseTicket } from '../holding/pending-release.js';
import { ownerCallsOf, type OwnerCalls } from '../owner-calls.js';

/** One node of a RedLock: a plain lock's calls by exact owner, with its one-attempt acquire. */
export type RedNode = OwnerCalls & Required<Pick<OwnerCalls, 'attempt'>>;

/** The RedLock node behind `value`, or undefined if it is no plain lock of this or another loaded copy of rlock. */
export function redNodeOf(value: unknown): RedNode | undefined {
  const calls = ownerCallsOf(value);
  return calls?.kind === 'lock' && calls.attempt ? (calls as RedNode) : undefined;
}

/**
 * Releases one hold of `owner` on the node: through its hold record when the node's client has
 * one (`ticket`: the same release tried again), else by one release call (a hold its clock ended).
 */
export function releaseOnNode(node: RedNode, owner: string, ticket?: ReleaseTicket): Promise<HoldsLeft> {
  return node.holdOf(owner) ? node.release(owner, ticket) : node.sendRelease(owner, 0, 1_000);
}
