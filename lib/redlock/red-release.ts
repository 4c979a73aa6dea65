import type { ReleaseTicket } from '../holding/release-hold.js';

/** One release of a RedLock hold, kept for its retries: a ticket per node, and whether the hold counted it. */
export interface RedRelease {
  readonly nodes: readonly ReleaseTicket[];
  counted: boolean;
}

export const newRedRelease = (nodes: number): RedRelease => ({ nodes: Array.from({ length: nodes }, () => ({})), counted: false });
