import type { HoldDesk } from './hold-desk.js';
import type { Acquisition, Hold } from './holds.js';
import { capHold } from './cap-hold.js';

/**
 * Counts an acquisition Redis confirmed in the client's hold records (the holder's clock), has the
 * watchdog renew a watchdog-mode hold, and caps it at `maxHoldMs` (see capHold). A RedLock's node
 * holds are `quiet`: the RedLock caps its hold as a whole.
 */
export function recordHold(core: Pick<HoldDesk, 'holds' | 'watchdog'>, acquisition: Acquisition, maxHoldMs: number | undefined): Hold {
  const hold = core.holds.acquired(acquisition);
  if (acquisition.watchdog) core.watchdog.kick();
  if (!acquisition.quiet && acquisition.letGo) capHold(core.holds, hold, maxHoldMs, acquisition.letGo);
  return hold;
}
