// Torture worker: the renewal threads (ClientSetup.thread) and the `stall` action. A client with
// a thread gets `renewalThread: { connect, maxStall }` on its main LockClient (not on its RedLock
// masters': a thread inherits the worker's `--import tsx`, which makes it cost about 0.6 s of CPU
// to start, and five more per client made every start of a worker a CPU storm that held up the
// others' waits). The thread connects through the client's own fault proxy with the client's own
// options (renewal-connect.ts), so a partition that cuts the client cuts its renewals too. An operation of such a client that
// holds a watchdog-mode lock (no maxHoldTime) may block the worker's event loop with a synchronous
// busy loop of 0.5–3 leases while it holds: the holds the threads renew must be kept through it,
// or, once it outlasted maxStall, told `stalled` on resuming before anyone else gets the lock.
// The parent is told what was blocked and which holds were renewed by a thread meanwhile
// (`stall`), and when each thread connected or went down (`thread`).
import { BroadcastChannel } from 'node:worker_threads';
import type { LockClient, LockClientOptions } from '../../lib/index.js';
import type { TortureClient } from './args.js';
import { now, type ClientSetup, type WorkerEvent } from './events.js';
import { TIMING, type Prng } from './schedule.js';

type RenewalThreadOptions = NonNullable<LockClientOptions['renewalThread']>;

/** An eligible operation stalls this often (when its threads are connected and no stall was near). */
const STALL_CHANCE = 0.85;
/** Most stalls stay well below maxStall: 0.5–2.4 leases. */
const SHORT_MIN_MS = TIMING.watchdogTimeout / 2;
const SHORT_MAX_MS = TIMING.maxStall - 400;
/**
 * A third outlast maxStall, by 50–400 ms (up to 2.93 leases): the thread then lets the hold go
 * (more often the longer the stall: it looks every lease / 3), and the hold is still in Redis
 * when its holder resumes and is told `stalled`. The thread's last renewal came at most a round
 * before the let-go, which came at least maxStall after the last heartbeat, at most 250 ms before
 * the stall: the hold lives at least maxStall + lease - lease / 3 - 250 ms = 750 ms past maxStall
 * after the stall began, 350 ms past the longest stall.
 */
const LONG_MIN_MS = TIMING.maxStall + 50;
const LONG_MAX_MS = TIMING.maxStall + 400;
/** No stall begins this soon after the worker's previous one ended: the worker is not blocked most of the time, ms. */
const STALL_GAP_MS = 2_500;
/** A thread counts as renewing this long after it said it connected (its `ready` reaches the LockClient meanwhile), ms. */
const SETTLE_MS = 250;

/** A stall an operation may make, drawn every time from its loop's own PRNG (the other draws stay what a seed gave). */
export interface StallDraw {
  readonly wanted: boolean;
  /** How long the hold is held before the loop blocks, ms. */
  readonly afterMs: number;
  /** How long the loop is blocked, ms. */
  readonly ms: number;
}

export function drawStall(rng: Prng): StallDraw {
  const wanted = rng.chance(STALL_CHANCE);
  const long = rng.chance(1 / 3);
  const ms = long ? rng.int(LONG_MIN_MS, LONG_MAX_MS) : rng.int(SHORT_MIN_MS, SHORT_MAX_MS);
  return { wanted, afterMs: rng.int(0, 200), ms };
}

/** Blocks this thread's event loop for `ms` (no timer, I/O callback or promise of this thread runs meanwhile). */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a long synchronous step
  }
}

interface Thread {
  readonly client: number;
  readonly which: string;
  state: 'connecting' | 'up' | 'down';
}

/** A hold the worker took, as far as the threads are concerned. */
interface Tracked {
  readonly signal: AbortSignal;
  /** The LockClients whose threads renew it (a RedLock's: every master's). */
  readonly via: readonly LockClient[];
  readonly client: number;
  readonly acl: boolean;
  /** Watchdog mode without maxHoldTime: what a thread renews to the end. */
  readonly renewable: boolean;
}

export interface StallsConfig {
  readonly worker: number;
  readonly incarnation: number;
  readonly client: TortureClient;
  /** The connect module's URL (renewal.ts), without its query. */
  readonly connect: string;
}

/** What a LockClient of a client with a renewal thread is made with. */
export interface ThreadSetup {
  /** `renewalThread` (undefined: no thread). */
  readonly options: RenewalThreadOptions | undefined;
  /** Watches the thread of the LockClient made with `options`. */
  readonly attach: (locks: LockClient) => void;
}

export class Stalls {
  readonly #send: (event: WorkerEvent) => void;
  readonly #config: StallsConfig;
  readonly #threads = new Map<LockClient, Thread>();
  readonly #channels = new Set<BroadcastChannel>();
  readonly #live = new Map<string, Tracked>();
  #lastEnd = -Infinity;

  constructor(send: (event: WorkerEvent) => void, config: StallsConfig) {
    this.#send = send;
    this.#config = config;
  }

  /**
   * The renewal thread of a LockClient of client `client` (`which`: `main`, or `red<i>` for a
   * RedLock master) connected to `url` (its proxy): only a main one, and only with `setup.thread`.
   * The connect module says on a BroadcastChannel when it connected (the thread renews from then on).
   */
  thread(url: string, setup: ClientSetup, client: number, which: string): ThreadSetup {
    if (!setup.thread || which !== 'main') return { options: undefined, attach: () => undefined };
    const { worker, incarnation } = this.#config;
    const name = `rlock-torture-${process.pid}-${worker}.${incarnation}-${client}-${which}`;
    const query = new URLSearchParams({ client: this.#config.client, url, ownRetries: setup.ownRetries ? '1' : '0', channel: name });
    const thread: Thread = { client, which, state: 'connecting' };
    const channel = new BroadcastChannel(name);
    this.#channels.add(channel);
    channel.onmessage = () => {
      channel.close();
      this.#channels.delete(channel);
      setTimeout(() => {
        if (thread.state !== 'connecting') return;
        thread.state = 'up';
        this.#send({ type: 'thread', t: now(), client, which, up: true });
      }, SETTLE_MS).unref();
    };
    channel.unref();
    return {
      options: { connect: `${this.#config.connect}?${query.toString()}`, maxStall: TIMING.maxStall },
      attach: (locks) => {
        this.#threads.set(locks, thread);
        locks.on('error', (error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          // The thread failed, died or could not connect: the event loop renews again.
          if (thread.state === 'down' || !message.includes('the main thread renews')) return;
          thread.state = 'down';
          this.#send({ type: 'thread', t: now(), client, which, up: false, error: message });
        });
      },
    };
  }

  /** A hold the worker took on `via` (of its client `client`): tracked until its release is called or it is lost (`forget`). */
  track(hold: string, signal: AbortSignal, via: readonly LockClient[], client: number, acl: boolean, renewable: boolean): void {
    this.#live.set(hold, { signal, via, client, acl, renewable });
  }

  /** The worker reported `event`: a hold whose release was called or that was lost is no longer held. */
  forget(event: WorkerEvent): void {
    if (event.type === 'release' || event.type === 'lost') this.#live.delete(event.hold);
  }

  /** Whether every LockClient of `via` runs a thread that is connected. */
  #renewing(via: readonly LockClient[]): boolean {
    return via.length > 0 && via.every((locks) => this.#threads.get(locks)?.state === 'up');
  }

  /** Whether an operation holding `hold` may stall now: threads renew that hold, and no stall of the worker was near. */
  mayStall(hold: string): boolean {
    const tracked = this.#live.get(hold);
    return tracked !== undefined && tracked.renewable && !tracked.signal.aborted && this.#renewing(tracked.via) && now() - this.#lastEnd >= STALL_GAP_MS;
  }

  /** Blocks the event loop for `ms` while `hold` (of client `client`) is held, and reports it. */
  stall(hold: string, client: number, ms: number): void {
    const guarded = [...this.#live].filter(([, h]) => h.renewable && !h.signal.aborted && this.#renewing(h.via));
    const renewed = guarded.map(([id, h]) => ({ hold: id, client: h.client, acl: h.acl }));
    const t0 = now();
    // Written to the IPC channel at once (its queue is empty but for a moment): a kill during the stall leaves this.
    this.#send({ type: 'stall', phase: 'begin', t: t0, t0, client, hold, protected: renewed });
    block(ms);
    const t = now();
    this.#lastEnd = t;
    this.#send({ type: 'stall', phase: 'end', t, t0, client, hold, protected: renewed });
  }

  close(): void {
    for (const channel of this.#channels) channel.close();
    this.#channels.clear();
  }
}
