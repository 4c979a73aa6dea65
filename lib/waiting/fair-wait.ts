import type { FairWaiterQueue } from './fair-waiter-queue.js';
import { attemptWithin, raceDeadline, TIMED_OUT, type Acquired, type Attempt, type AttemptGuard } from './wait.js';

/** The answer to one attempt on a fair lock. */
export type FairAttempt =
  | (Attempt & { readonly acquired: true })
  | { readonly acquired: false; /** Ask again within this many ms at the latest. */ readonly recheckMs: number };

export interface TurnLoop extends AttemptGuard {
  /** This waiting call's id in the lock's queue. */
  readonly waiterId: string;
  /** One attempt: acquires, or queues this waiter (or keeps its place in the queue). */
  attempt(): Promise<FairAttempt>;
  /** This client's local waiters on the lock: the queue if there is one, or a new one. */
  readonly waiters: { peek(): FairWaiterQueue | undefined; get(): FairWaiterQueue };
  /** performance.now() ms after which to give up; Infinity for no limit. */
  readonly deadline: number;
  /** The longest sleep between two check-ins, ms: well inside the time a waiter keeps its place. */
  readonly checkInMs: number;
  /** Leaves the lock's queue in Redis: the call gave up (or failed) without the lock. */
  leave(): void;
}

/**
 * Acquires a fair lock in queue order, waiting until `deadline`. The first attempt queues this
 * waiter; then subscribe, ask again (a turn notice published before the subscription was live
 * is lost), and sleep until this waiter's turn notice, the time to check in, the holder's TTL
 * (the head takes an expired lock), or the time the waiter ahead loses its place if it stopped
 * checking in (its client died). A call that ends without the lock leaves the queue at once.
 * Resolves with when the successful attempt was sent, or false at the deadline.
 */
export async function acquireInTurn(loop: TurnLoop): Promise<Acquired | false> {
  const { deadline, signal, waiterId } = loop;
  // As for the non-fair lock, an uncontended acquisition creates no local queue; a queue that
  // exists may be subscribed already, so the waiter enters before its first attempt is sent.
  let queue = loop.waiters.peek();
  const wasSubscribed = queue?.subscribed ?? false;
  queue?.enter(waiterId);
  let attempts = 0;
  const attempt = (): Promise<FairAttempt | typeof TIMED_OUT> => {
    attempts += 1;
    return attemptWithin(() => loop.attempt(), loop, deadline);
  };
  let acquired = false;
  try {
    let result = await attempt();
    if (result === TIMED_OUT) return false;
    if (result.acquired) {
      acquired = true;
      return { ...result, attempts };
    }
    if (!queue) {
      queue = loop.waiters.get();
      queue.enter(waiterId);
    }
    if (!wasSubscribed) {
      if ((await raceDeadline(queue.subscribe(), deadline, signal)) === TIMED_OUT) return false;
      result = await attempt();
      if (result === TIMED_OUT) return false;
    }
    while (!result.acquired) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) return false;
      const sleepMs = Math.min(result.recheckMs, loop.checkInMs, remaining);
      const woke = await queue.sleep(waiterId, sleepMs, signal);
      // Timers may fire a fraction of a ms early: a sleep to the deadline that ran out is the deadline.
      if (deadline <= performance.now() || (woke === 'timeout' && sleepMs === remaining)) return false;
      result = await attempt();
      if (result === TIMED_OUT) return false;
    }
    acquired = true;
    return { ...result, attempts };
  } finally {
    queue?.leave(waiterId);
    // Sent after the last attempt on the same connection, so Redis runs it after that attempt.
    if (!acquired) loop.leave();
  }
}
