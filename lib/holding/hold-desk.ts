import type { LockReleasedInfo } from '../events.js';
import type { Holds } from './holds.js';

/**
 * What the holding floor needs of a client (LockCore has it): its holds, the watchdog's kick, the
 * `released` event. Narrow, so this floor never sees the lock kinds' whole core.
 */
export interface HoldDesk {
  readonly clientId: string;
  readonly watchdogTimeoutMs: number;
  readonly holds: Holds;
  readonly watchdog: { kick(): void };
  readonly events: { emit(event: 'released', info: LockReleasedInfo): boolean };
  /** @throws LockClientClosedError once the client is closed. */
  assertOpen(): void;
}
