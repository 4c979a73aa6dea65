import type { WaitTarget } from '../keys.js';
import type { WaiterQueue } from './waiter-queue.js';
import { WaiterMode } from '../scripts/registry.js';
import { acquireOnce, acquireWithin, type AcquireLoop, type Acquired, type AttemptResult } from './wait.js';
import type { WaiterQueues } from './waiter-queues.js';

/** What a non-fair wait needs of a client (LockCore has it): its local queues, and its watchdog lease. */
export interface NonFairWaitDesk {
  readonly waiters: WaiterQueues;
  readonly watchdogTimeoutMs: number;
}

/** One waiting acquisition's loop (wait.ts): its attempts, its guard and this client's local waiters on `target`, in one object. */
class NonFairLoop implements AcquireLoop {
  readonly waiters = this;
  readonly noTtlSleepMs: number;

  constructor(
    readonly core: NonFairWaitDesk,
    readonly target: WaitTarget,
    readonly deadline: number,
    readonly signal: AbortSignal | undefined,
    readonly attempt: (mode: WaiterMode) => Promise<AttemptResult>,
    readonly abandon: () => void,
  ) {
    this.noTtlSleepMs = core.watchdogTimeoutMs;
  }

  peek(): WaiterQueue | undefined {
    return this.core.waiters.peek(this.target);
  }

  get(): WaiterQueue {
    return this.core.waiters.get(this.target);
  }
}

/**
 * The non-fair waiting strategy (plain, fenced and read-write locks): `attempt` once (`waitMs`
 * 0), or until `waitMs` runs out (undefined: no limit), sleeping between attempts on `target`'s
 * wake-up channel. `abandon` undoes an acquisition that came after the wait was given up.
 */
export function waitNonFair(
  core: NonFairWaitDesk,
  target: WaitTarget,
  waitMs: number | undefined,
  signal: AbortSignal | undefined,
  attempt: (mode: WaiterMode) => Promise<AttemptResult>,
  abandon: () => void,
): Promise<Acquired | false> {
  if (waitMs === 0) return acquireOnce(() => attempt(WaiterMode.Single), { signal, abandon });
  return acquireWithin(new NonFairLoop(core, target, waitMs === undefined ? Infinity : performance.now() + waitMs, signal, attempt, abandon));
}
