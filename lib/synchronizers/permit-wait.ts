import type { LockCore } from '../core.js';
import { SUBSCRIPTION_LINGER_MS } from '../options.js';
import type { SemaphoreKeys } from '../keys.js';
import { acquireInTurn, type FairAttempt } from '../waiting/fair-wait.js';
import { FairWaiterQueue } from '../waiting/fair-waiter-queue.js';
import { acquireOnce, attemptWithin, raceDeadline, TIMED_OUT, type Acquired, type AttemptResult } from '../waiting/wait.js';
import { PermitWaiterQueue } from './permit-waiter-queue.js';

// How a semaphore waits for permits: non-fair (a notice names this client) or fair (in queue
// order). Each resolves with the grant, or false when the wait ran out.

/** One attempt's request for permits: `need` of `limit`, as permit `id`. */
export interface PermitRequest {
  readonly core: LockCore;
  readonly keys: SemaphoreKeys;
  /** The semaphore's limit. */
  readonly limit: number;
  readonly need: number;
  readonly id: string;
  readonly ttlMs: number;
  /** ms left to wait; undefined: without limit; 0: one attempt. */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** Gives the permit back when a grant's answer comes after the caller stopped waiting. */
  readonly abandon: () => void;
  /** Gives the permit back, resolving once Redis answered. */
  readonly giveBack: () => Promise<unknown>;
}

/**
 * An attempt that failed without an answer may have run in Redis: its permit (the id is this
 * acquisition's alone) is given back, after it on the same connection, so the rejected
 * acquisition keeps nothing.
 */
function givenBackOnError<T>(attempt: Promise<T>, request: PermitRequest): Promise<T> {
  return attempt.catch((error: unknown) => {
    void giveBackInLease(request);
    throw error;
  });
}

/** Tries to give the permit back until Redis answers or its lease is over (then it is free anyway). */
async function giveBackInLease(request: PermitRequest): Promise<void> {
  const until = performance.now() + request.ttlMs;
  for (let pauseMs = 50; performance.now() < until; pauseMs = Math.min(pauseMs * 2, 1_000)) {
    try {
      request.core.assertOpen();
      await request.giveBack();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, pauseMs).unref());
    }
  }
}

/** Fair waiter ids are numbered per process; with the client's listener id they are unique everywhere. */
let lastWaiter = 0;

/** The waiter mode the scripts take (waiter-set.lua). */
function modeFor(queue: PermitWaiterQueue | undefined, woken: boolean): string {
  if (queue?.othersWaiting) return woken ? '3' : '1';
  return woken ? '4' : '2';
}

/** Non-fair: one attempt, or wait on this client's channel until a release names it. */
export async function waitForNotice(request: PermitRequest): Promise<Acquired | false> {
  const { core, keys, limit, need, id, ttlMs, waitMs, signal, abandon } = request;
  const scripts = core.scripts.synchronizers;
  const me = Symbol('waiter');
  let queue: PermitWaiterQueue | undefined;
  const send = async (mode: string): Promise<AttemptResult> => {
    // Sent now: the permits a notice promised this waiter are used by this attempt.
    const wait = {
      mode,
      promised: queue?.claim(me) ?? 0,
      hint: queue?.hint() || `${need},${need}`,
      othersHint: mode === '0' ? '' : (queue?.hint(me) ?? ''),
    };
    const sentAt = performance.now();
    const left = await givenBackOnError(scripts.acquire(keys, id, limit, ttlMs, core.waiters.listenerId, wait, core.publish), request);
    return left === null ? { acquired: true, sentAt } : { acquired: false, ttlMs: left };
  };
  if (waitMs === 0) return acquireOnce(() => send('0'), { signal, abandon });
  const deadline = waitMs === undefined ? Infinity : performance.now() + waitMs;
  const guard = { signal, abandon };
  queue = core.waiters.peekChannel<PermitWaiterQueue>(keys.wakePrefix);
  const wasSubscribed = queue?.subscribed ?? false;
  queue?.enter(me, need);
  let acquired = false;
  try {
    const attempt = (woken = false): Promise<AttemptResult | typeof TIMED_OUT> => attemptWithin(() => send(modeFor(queue, woken)), guard, deadline);
    let result = await attempt();
    if (result === TIMED_OUT) return false;
    if (!result.acquired && !queue) {
      queue = permitQueue(core, keys, limit);
      queue.enter(me, need);
    }
    // Busy: unless the channel was live before that attempt, subscribe and ask again (a release
    // published in between reached nobody).
    if (!result.acquired && !wasSubscribed) {
      if ((await raceDeadline(queue!.subscribe(), deadline, signal)) === TIMED_OUT) return false;
      result = await attempt();
      if (result === TIMED_OUT) return false;
    }
    while (!result.acquired) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) return false;
      const woke = await queue!.sleep(me, Math.min(result.ttlMs > 0 ? result.ttlMs : 1, remaining), signal);
      // Woken too late: a share it was promised and did not use is passed on when it leaves.
      if (deadline <= performance.now()) return false;
      result = await attempt(woke === 'notice');
      if (result === TIMED_OUT) return false;
    }
    acquired = true;
    return result;
  } finally {
    queue?.leave(me, acquired);
  }
}

/** This client's waiter queue for the semaphore's wake channel. */
function permitQueue(core: LockCore, keys: SemaphoreKeys, limit: number): PermitWaiterQueue {
  const scripts = core.scripts.synchronizers;
  return core.waiters.channel(
    keys.wakePrefix,
    (hooks) =>
      new PermitWaiterQueue(
        {
          ...hooks,
          passWake: (permits, leave) => core.waiters.leaving(scripts.passWake(keys, core.waiters.listenerId, limit, core.publish, permits, leave)),
          // A script, not a ZREM: it also drops the waiter set when only its keeper is left.
          leaveWaiterSet: () => core.waiters.leaving(scripts.passWake(keys, core.waiters.listenerId, limit, core.publish, 0, true)),
        },
        SUBSCRIPTION_LINGER_MS,
      ),
  );
}

/** Fair: in queue order (fair-wait.ts), on this client's turn channel. */
export function waitInTurn(request: PermitRequest): Promise<Acquired | false> {
  const { core, keys, limit, need, id, ttlMs, waitMs, signal, abandon } = request;
  const scripts = core.scripts.synchronizers;
  const waitTimeoutMs = core.fairLockWaitTimeoutMs;
  let sent = 0;
  const attempt = async (waiterId: string): Promise<FairAttempt> => {
    const sentAt = performance.now();
    // The first attempt of a waiter: Redis need not look for it in the queue.
    const first = waiterId !== '' && sent++ === 0;
    const recheckMs = await givenBackOnError(scripts.fairAcquire(keys, id, limit, ttlMs, waiterId, waitTimeoutMs, core.publish, first), request);
    return recheckMs === null ? { acquired: true, sentAt } : { acquired: false, recheckMs };
  };
  if (waitMs === 0) return acquireOnce(() => attempt(''), { signal, abandon });
  lastWaiter += 1;
  const waiterId = `${core.waiters.listenerId}|${lastWaiter.toString(36)}|${need}`;
  const channel = (): FairWaiterQueue => core.waiters.channel(keys.turnPrefix, (hooks) => new FairWaiterQueue(hooks, SUBSCRIPTION_LINGER_MS));
  return acquireInTurn({
    waiterId,
    attempt: () => attempt(waiterId),
    abandon,
    leave: () => void scripts.fairLeave(keys, waiterId, limit, core.publish).catch((error: unknown) => core.events.emit('error', error)),
    signal,
    waiters: { peek: () => core.waiters.peekChannel<FairWaiterQueue>(keys.turnPrefix), get: channel },
    deadline: waitMs === undefined ? Infinity : performance.now() + waitMs,
    checkInMs: waitTimeoutMs / 3,
  });
}
