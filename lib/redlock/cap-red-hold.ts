import { LockLostError } from '../errors.js';
import type { RedNode } from './red-node.js';
import type { RedHold } from './red-hold.js';

/** A hold's `maxHoldTime` deadline and its timer. */
interface Cap {
  at: number;
  timer: NodeJS.Timeout;
}

const caps = new WeakMap<RedHold, Cap>();

/**
 * `maxHoldTime` for a RedLock: a watchdog-mode hold is renewed at most `maxHoldMs` after this
 * acquisition (the earliest deadline of its acquisitions counts). Then no node renews it, its
 * Leases abort and `lost` ('max-hold-time') is emitted, and only then is it let go on every node:
 * the holder is told before anyone else can take it.
 */
export function capRedHold(hold: RedHold, maxHoldMs: number | undefined, nodes: readonly RedNode[], name: string): void {
  if (maxHoldMs === undefined || !hold.watchdog || hold.ended) return;
  const at = performance.now() + maxHoldMs;
  const cap = caps.get(hold);
  if (cap && cap.at <= at) return;
  if (cap) clearTimeout(cap.timer);
  hold.onEnd = () => clearTimeout(caps.get(hold)?.timer);
  const timer = setTimeout(() => {
    caps.delete(hold);
    const error = new LockLostError(`RedLock "${name}" was held for its maxHoldTime (${maxHoldMs} ms) and let go`, 'max-hold-time', { lockName: name });
    hold.capped(error, (node, member) => {
      // The node's record ends quietly (the RedLock told its holder); its holds are released.
      nodes[node]!.core.holds.end(member, 'max-hold-time');
      member.letGo?.(member.count);
    });
  }, maxHoldMs);
  timer.unref();
  caps.set(hold, { at, timer });
}
