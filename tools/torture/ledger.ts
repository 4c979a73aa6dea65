// Torture worker: the Leases of one operation (one lock context, so one owner) and how their
// releases went. A release that rejects with LockRedisError is called again (SPEC: a retried
// release is the same release), and the owner's count is handed to the parent to compare with
// Redis: while Leases are live Redis must count at least that many holds of the owner, and once
// every Lease was released (each release resolved, nothing lost, no acquisition failed) it must
// hold nothing for the owner.
import { LockRedisError, type Lease } from '../../lib/index.js';
import type { Kind } from './args.js';
import { now, type WorkerEvent } from './events.js';
import type { Prng } from './schedule.js';

/** One acquisition the worker tracks. */
export interface Acquired {
  readonly lease: Lease;
  readonly hold: string;
}

/** The kinds whose owner the parent can count in Redis (a hash field: owner id → hold count). */
const COUNTED: readonly Kind[] = ['lock', 'fair', 'fenced'];
/** The kinds whose owner's end the parent can check in Redis (the above, and a read-write lock's sides). */
const CHECKED: readonly Kind[] = [...COUNTED, 'rw'];

/** How an operation calls release() again after it rejected: the first pause, and how many tries in all. */
export interface RetryPlan {
  readonly pauseMs: number;
  readonly tries: number;
}

/** Drawn once per operation (from the operation's own PRNG). */
export function drawRetryPlan(rng: Prng): RetryPlan {
  return { pauseMs: rng.int(0, 300), tries: rng.int(2, 5) };
}

/** No retry starts this long after the first call (each try waits up to 5 s for its answer). */
const RETRY_FOR_MS = 6_000;
const RETRY_PAUSE_MAX_MS = 1_000;

export interface LedgerWorker {
  readonly send: (event: WorkerEvent) => void;
  readonly describe: (error: unknown) => string;
  readonly sleep: (ms: number) => Promise<void>;
}

export class Ledger {
  owner: string | undefined;
  /** Acquired, no release called yet. */
  readonly #live = new Set<Acquired>();
  #acquisitionsFailed = 0;
  #releasesFailed = 0;
  #lost = false;
  #handedOff = false;

  constructor(
    readonly worker: LedgerWorker,
    /** The worker's client the operation runs on, and whether it connects as the ACL user. */
    readonly client: number,
    readonly acl: boolean,
    readonly op: string,
    readonly kind: Kind,
    readonly names: readonly string[],
    readonly retry: RetryPlan,
  ) {}

  acquired(acquired: Acquired): void {
    this.owner ??= acquired.lease.owner;
    this.#live.add(acquired);
  }

  acquisitionFailed(): void {
    this.#acquisitionsFailed += 1;
  }

  /** The hold was handed off (or a hand-off was tried): the owner lives on elsewhere. */
  handedOff(): void {
    this.#handedOff = true;
  }

  /** Releases `acquired` (reported), calling release() again while it rejects with LockRedisError; resolves with whether it resolved. */
  async release(acquired: Acquired): Promise<boolean> {
    const { send, describe, sleep } = this.worker;
    this.#live.delete(acquired);
    const { lease, hold } = acquired;
    const t0 = now();
    send({ type: 'release', t: t0, hold });
    let error: unknown;
    try {
      await lease.release();
      send({ type: 'released', t: now(), t0, hold, ok: true, aborted: lease.signal.aborted });
    } catch (caught) {
      error = caught;
      send({ type: 'released', t: now(), t0, hold, ok: false, error: describe(caught), aborted: lease.signal.aborted });
    }
    let pause = this.retry.pauseMs;
    for (let n = 2; error instanceof LockRedisError && n <= this.retry.tries && now() - t0 < RETRY_FOR_MS; n += 1) {
      await sleep(pause);
      pause = Math.min(RETRY_PAUSE_MAX_MS, pause * 2 + 50);
      const t1 = now();
      try {
        await lease.release();
        error = undefined;
        send({ type: 'retried', t: now(), t0: t1, hold, n, ok: true, aborted: lease.signal.aborted });
      } catch (caught) {
        error = caught;
        send({ type: 'retried', t: now(), t0: t1, hold, n, ok: false, error: describe(caught), aborted: lease.signal.aborted });
      }
    }
    if (lease.signal.aborted) this.#lost = true;
    if (error !== undefined) this.#releasesFailed += 1;
    this.count();
    return error === undefined;
  }

  /** Hands the parent the owner's live Leases to compare with Redis (while some are live). */
  count(): void {
    if (this.owner === undefined || !COUNTED.includes(this.kind) || this.#handedOff) return;
    const live = [...this.#live].filter((a) => !a.lease.signal.aborted).length;
    if (live === 0) return;
    this.#send(live, false, 0);
  }

  #send(live: number, final: boolean, unanswered: number): void {
    const { op, client, acl, kind, names } = this;
    this.worker.send({ type: 'owner-count', t: now(), op, client, acl, owner: this.owner!, kind, names, live, final, unanswered });
  }

  /**
   * The operation is over: when every Lease was released (nothing lost, handed off or left, no
   * acquisition failed that might still run in Redis), the parent checks that Redis holds
   * nothing for the owner: at once if each release resolved, else once rlock's background
   * retries of the rejected ones could get through.
   */
  finish(): void {
    for (const acquired of this.#live) if (acquired.lease.signal.aborted) this.#lost = true;
    const released = this.#live.size === 0 && this.#acquisitionsFailed === 0 && !this.#lost && !this.#handedOff;
    if (this.owner === undefined || !CHECKED.includes(this.kind) || !released) return;
    this.#send(0, true, this.#releasesFailed);
  }
}
