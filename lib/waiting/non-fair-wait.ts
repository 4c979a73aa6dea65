import type { LockCore } from '../core.js';
import type { WaitTarget } from '../keys.js';
import type { WaiterQueue } from './waiter-queue.js';
import { WaiterMode } from '../scripts/registry.js';
import { acquireOnce, acquireWithin, type Acquired, type AttemptResult } from './wait.js';

/** This client's local waiters on `target` (one object per acquisition, not two closures). */
class TargetWaiters {
  readonly #core: LockCore;
  readonly #target: WaitTarget;

  constructor(core: LockCore, target: WaitTarget) {
    this.#core = core;
    this.#target = target;
  }

  peek(): WaiterQueue | undefined {
    return this.#core.waiters.peek(this.#target);
  }

  get(): WaiterQueue {
    return this.#core.waiters.get(this.#target);
  }
}

/**
 * The non-fair waiting strategy (plain, fenced and read-write locks): `attempt` once (`waitMs`
 * 0), or until `waitMs` runs out (undefined: no limit), sleeping between attempts on `target`'s
 * wake-up channel. `abandon` undoes an acquisition that came after the wait was given up.
 */
export function waitNonFair(
  core: LockCore,
  target: WaitTarget,
  waitMs: number | undefined,
  signal: AbortSignal | undefined,
  attempt: (mode: WaiterMode) => Promise<AttemptResult>,
  abandon: () => void,
): Promise<Acquired | false> {
  if (waitMs === 0) return acquireOnce(() => attempt(WaiterMode.Single), { signal, abandon });
  return acquireWithin({
    attempt,
    abandon,
    signal,
    waiters: new TargetWaiters(core, target),
    deadline: waitMs === undefined ? Infinity : performance.now() + waitMs,
    noTtlSleepMs: core.watchdogTimeoutMs,
  });
}
