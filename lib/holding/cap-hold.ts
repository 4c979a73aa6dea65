import { LockLostError } from '../errors.js';
import type { Hold, Holds } from './holds.js';

/** A hold's `maxHoldTime` deadline and its timer. */
interface Cap {
  at: number;
  timer: NodeJS.Timeout;
}

const caps = new WeakMap<Hold, Cap>();

/**
 * `maxHoldTime`: a watchdog-mode hold is renewed at most `maxHoldMs` after this acquisition (the
 * earliest deadline of its acquisitions counts). Then the watchdog stops renewing it, its Leases
 * abort and `lost` ('max-hold-time') is emitted, and only then is it let go in Redis (`letGo`
 * releases `count` holds): the holder is told before anyone else can take it.
 */
export function capHold(holds: Holds, hold: Hold, maxHoldMs: number | undefined, letGo: (count: number) => void): void {
  if (maxHoldMs === undefined || !hold.watchdog) return;
  const at = performance.now() + maxHoldMs;
  const cap = caps.get(hold);
  if (cap && cap.at <= at) return;
  if (cap) clearTimeout(cap.timer);
  else hold.observe({ ended: () => clearTimeout(caps.get(hold)?.timer) });
  const timer = setTimeout(() => reachCap(holds, hold, maxHoldMs, letGo), maxHoldMs);
  timer.unref();
  caps.set(hold, { at, timer });
  holds.capped(hold, at);
}

function reachCap(holds: Holds, hold: Hold, maxHoldMs: number, letGo: (count: number) => void): void {
  caps.delete(hold);
  if (!holds.isCurrent(hold) || !hold.held) return;
  const count = hold.count;
  // No renewal from now on, whatever happens below.
  hold.stopRenewing();
  const name = hold.target.name;
  const error = new LockLostError(`${hold.object} "${name}" was held for its maxHoldTime (${maxHoldMs} ms) and let go`, 'max-hold-time', {
    lockName: name,
  });
  holds.lose(hold, 'max-hold-time', error);
  letGo(count);
}
