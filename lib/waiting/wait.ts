import type { WaiterQueue } from './waiter-queue.js';
import { SINGLE_ATTEMPT_MS } from '../options.js';
import { WaiterMode } from '../scripts/registry.js';

/** What `raceDeadline` resolves with when the deadline came first. */
export const TIMED_OUT = Symbol('rlock.timedOut');

// Every pending race shares ONE timer, armed for the earliest deadline: a lock call that Redis
// answers in time (nearly all of them) costs an array push, not a timer of its own. The races
// wait in a plain array, not a Set: a settled race is only marked (a Set's insertion and deletion
// of a new object cost more than the rest of the race, docs/performance.md) and left for the next
// compaction, which runs once the array holds more settled races than pending ones (64 at least),
// and at every firing of the timer. The timer stays armed when no race is pending (re-arming per
// call is what this saves) and is unref'd: a pending call's connection keeps the process alive,
// not its deadline.
let racers: Race<unknown>[] = [];
/** Races in `racers` not settled yet. */
let waitingRaces = 0;
let timer: NodeJS.Timeout | undefined;
let timerAt = Infinity;

/** How many races wait for a deadline (for specs: none once every race settled). */
export function pendingRaces(): number {
  return waitingRaces;
}

function arm(at: number): void {
  if (timer && timerAt <= at) return;
  clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(expireDue, Math.max(0, at - performance.now()));
  timer.unref();
}

function enlist(race: Race<unknown>): void {
  if (racers.length >= 2 * waitingRaces + 64) racers = racers.filter((racer) => racer.listed);
  racers.push(race);
  waitingRaces += 1;
  arm(race.at);
}

function expireDue(): void {
  timer = undefined;
  timerAt = Infinity;
  // Timers may fire a fraction of a ms early.
  const now = performance.now() + 1;
  const due: Race<unknown>[] = [];
  const kept: Race<unknown>[] = [];
  let next = Infinity;
  for (const racer of racers) {
    if (!racer.listed) continue;
    if (racer.at <= now) {
      racer.listed = false;
      due.push(racer);
    } else {
      kept.push(racer);
      if (racer.at < next) next = racer.at;
    }
  }
  // Races made by what the due ones run go into the new array.
  racers = kept;
  waitingRaces = kept.length;
  if (next !== Infinity) arm(next);
  for (const racer of due) racer.expire();
}

/**
 * One pending race: its place among the races waiting for the shared timer, and the abort
 * listener (an object with `handleEvent`), in one object rather than a closure each: a lock call
 * allocates little.
 */
class Race<T> {
  readonly at: number;
  /** Waiting in `racers` for its deadline. */
  listed = false;
  readonly #signal: AbortSignal | undefined;
  readonly #resolve: (value: T | typeof TIMED_OUT) => void;
  readonly #reject: (reason: unknown) => void;
  readonly #gaveUp: (() => void) | undefined;

  constructor(at: number, signal: AbortSignal | undefined, resolve: (value: T | typeof TIMED_OUT) => void, reject: (reason: unknown) => void, gaveUp: (() => void) | undefined) {
    this.at = at;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#gaveUp = gaveUp;
  }

  /** The deadline came first (expireDue took it off the list). */
  expire(): void {
    this.#signal?.removeEventListener('abort', this);
    this.#gaveUp?.();
    this.#resolve(TIMED_OUT);
  }

  /** The signal aborted first. */
  handleEvent(): void {
    this.#cleanup();
    this.#gaveUp?.();
    this.#reject(this.#signal?.reason);
  }

  settle(value: T): void {
    this.#cleanup();
    this.#resolve(value);
  }

  fail(error: unknown): void {
    this.#cleanup();
    this.#reject(error);
  }

  #cleanup(): void {
    if (this.listed) {
      this.listed = false;
      waitingRaces -= 1;
    }
    this.#signal?.removeEventListener('abort', this);
  }
}

/**
 * Resolves with `promise`'s value, or TIMED_OUT at `deadline` (performance.now() ms), or
 * rejects with the signal's reason on abort. `promise` itself keeps running either way;
 * `gaveUp` is called when the deadline or the abort came first (e.g. to undo a late success).
 */
export function raceDeadline<T>(promise: Promise<T>, deadline: number, signal?: AbortSignal, gaveUp?: () => void): Promise<T | typeof TIMED_OUT> {
  if (deadline === Infinity && !signal) return promise;
  if (signal?.aborted) {
    gaveUp?.();
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
    const race = new Race<T>(deadline, signal, resolve, reject, gaveUp);
    if (deadline !== Infinity) {
      race.listed = true;
      enlist(race as Race<unknown>);
    }
    signal?.addEventListener('abort', race, { once: true });
    promise.then(
      (value) => race.settle(value),
      (error: unknown) => race.fail(error),
    );
  });
}

/** A successful acquisition. */
export interface Acquired {
  readonly acquired: true;
  /** performance.now() when the attempt was sent: the lease counts from here. */
  readonly sentAt: number;
  /** The fencing token, for fenced locks. */
  readonly token?: number;
  /** How many attempts the acquisition took, this one included (set by the wait loops). */
  readonly attempts?: number;
}

/** What every acquisition attempt answers at least. */
export type Attempt = Acquired | { readonly acquired: false };

/** The answer to one attempt on a non-fair lock. */
export type AttemptResult =
  | Acquired
  | { readonly acquired: false; /** How long the holder blocks us at most, ms (-1: its key has no TTL). */ readonly ttlMs: number };

/** What abandons an attempt: the deadline, the signal, and how to undo a late acquisition. */
export interface AttemptGuard {
  readonly signal: AbortSignal | undefined;
  /** An attempt we stopped waiting for (deadline, abort) acquired after all: undo it. */
  abandon(): void;
}

export interface AcquireLoop extends AttemptGuard {
  /** One attempt; `mode` tells Redis whether this client keeps other waiters on the lock. */
  attempt(mode: WaiterMode): Promise<AttemptResult>;
  /** This client's local waiters on the lock: the queue if there is one, or a new one. */
  readonly waiters: { peek(): WaiterQueue | undefined; get(): WaiterQueue };
  /** performance.now() ms after which to give up; Infinity for no limit. */
  readonly deadline: number;
  /** How long to sleep when the holder's key has no TTL, ms. */
  readonly noTtlSleepMs: number;
}

/**
 * One attempt, no waiting (`waitTime` 0): false when the lock is busy, or when no answer came
 * within SINGLE_ATTEMPT_MS (a silent connection); an attempt that succeeds after it was given up
 * (the time limit, an abort) is undone.
 */
export async function acquireOnce(attempt: () => Promise<Attempt>, guard: AttemptGuard): Promise<Acquired | false> {
  const result = await attemptWithin(attempt, guard, performance.now() + SINGLE_ATTEMPT_MS);
  return result !== TIMED_OUT && result.acquired ? { ...result, attempts: 1 } : false;
}

/**
 * The waiter mode of an attempt; `woken`: a wake-up notice prompted it (see waiter-set.lua).
 * With no local queue the client is in no waiter set yet (a busy lock makes it subscribe and ask
 * again, registering then), so the first attempt needs no waiter bookkeeping in Redis.
 */
const modeFor = (queue: WaiterQueue | undefined, woken = false): WaiterMode =>
  !queue
    ? WaiterMode.Single
    : queue.othersWaiting
    ? woken
      ? WaiterMode.SharedWoken
      : WaiterMode.Shared
    : woken
      ? WaiterMode.AloneWoken
      : WaiterMode.Alone;

/**
 * Acquires, waiting until `deadline`: subscribe, ask again (a release may have been published
 * before the subscription was live), then sleep until this client is woken by a release or
 * the holder's TTL runs out, never past the deadline. No fixed-interval polling.
 * Resolves with the successful attempt, or false at the deadline.
 */
export function acquireWithin(loop: AcquireLoop): Promise<Acquired | false> {
  // Notices only arrive on a subscribed channel, so with no queue yet there is nothing to
  // count: an uncontended acquisition creates no queue and sends one command. That path, the
  // one nearly every call takes, runs here without the waiting loop's frame.
  if (loop.waiters.peek()) return waitFor(loop, undefined);
  let pending: Promise<AttemptResult>;
  try {
    pending = loop.attempt(WaiterMode.Single);
  } catch (error) {
    return Promise.reject(error);
  }
  return sentWithin(pending, loop, loop.deadline).then((result) => (result === TIMED_OUT ? false : result.acquired ? result : waitFor(loop, result)));
}

/**
 * The waiting loop of acquireWithin; `first`: the answer of a first attempt made with no local
 * queue (the lock proved busy), or undefined when the loop makes the first attempt itself.
 */
async function waitFor(loop: AcquireLoop, first: AttemptResult | undefined): Promise<Acquired | false> {
  const { deadline, signal } = loop;
  let queue = first ? undefined : loop.waiters.peek();
  const wasSubscribed = queue?.subscribed ?? false;
  queue?.enter();
  let acquired = false;
  let attempts = first ? 1 : 0;
  try {
    const attempt = (woken = false): Promise<AttemptResult | typeof TIMED_OUT> => {
      attempts += 1;
      return attemptWithin(() => loop.attempt(modeFor(queue, woken)), loop, deadline);
    };
    let result = first ?? (await attempt());
    if (result === TIMED_OUT) return false;
    if (!result.acquired && !queue) {
      queue = loop.waiters.get();
      queue.enter();
    }
    // The lock proved busy. Unless the channel was live before that attempt, subscribe and ask
    // again: a release published in between would have found no one listening.
    if (!result.acquired && queue && !wasSubscribed) {
      if ((await raceDeadline(queue.subscribe(), deadline, signal)) === TIMED_OUT) return false;
      result = await attempt();
      if (result === TIMED_OUT) return false;
    }
    while (!result.acquired && queue) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) return false;
      const holderTtl = result.ttlMs > 0 ? result.ttlMs : result.ttlMs === 0 ? 1 : loop.noTtlSleepMs;
      const woke = await queue.sleep(Math.min(holderTtl, remaining), signal);
      if (deadline <= performance.now()) {
        // Too late to use a wake-up: hand it to another waiter rather than lose it.
        if (woke === 'notice') queue.notify();
        return false;
      }
      result = await attempt(woke === 'notice');
      if (result === TIMED_OUT) return false;
    }
    acquired = result.acquired;
    return result.acquired ? { ...result, attempts } : false;
  } finally {
    queue?.leave(acquired);
  }
}

/**
 * Sends one attempt and waits for its answer until `deadline` (performance.now() ms) or an abort.
 * An attempt given up on that acquires after all is undone with `guard.abandon()`.
 */
export function attemptWithin<R extends Attempt>(
  attempt: () => Promise<R>,
  guard: AttemptGuard,
  deadline: number,
): Promise<R | typeof TIMED_OUT> {
  let pending: Promise<R>;
  try {
    pending = attempt();
  } catch (error) {
    return Promise.reject(error);
  }
  return sentWithin(pending, guard, deadline);
}

/** As attemptWithin, for an attempt already sent (`pending`). */
function sentWithin<R extends Attempt>(pending: Promise<R>, guard: AttemptGuard, deadline: number): Promise<R | typeof TIMED_OUT> {
  // No deadline and no signal: nothing can give up on the attempt.
  if (deadline === Infinity && !guard.signal) return pending;
  return raceDeadline(pending, deadline, guard.signal, () => undoIfAcquired(pending, guard));
}

/** An attempt given up on (deadline, abort): undone if it acquires after all. */
function undoIfAcquired(pending: Promise<Attempt>, guard: AttemptGuard): void {
  pending.then(
    (late) => {
      if (late.acquired) guard.abandon();
    },
    () => undefined,
  );
}
