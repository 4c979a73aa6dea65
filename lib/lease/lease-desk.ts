import type { HoldDesk } from '../holding/hold-desk.js';
import type { LockScripts } from '../scripts/registry.js';

/** What extending and handing off a hold need of a client (LockCore has it), beyond its holds. */
export interface LeaseDesk extends HoldDesk {
  readonly keyPrefix: string;
  readonly scripts: Pick<LockScripts, 'requests' | 'leaseMoves'>;
}
