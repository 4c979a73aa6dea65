/** What the parent and the workers say to each other over IPC. */
import type { Kind, TortureClient } from './args.js';

/** Wall-clock ms with sub-ms precision, monotonic within a process and comparable across processes on one machine. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** How a hold takes its lock: exclusively, or as a read (shared with other reads) or write side of a read-write lock. */
export type HoldMode = 'excl' | 'read' | 'write';

/**
 * How one LockClient of a worker connects, drawn per worker and client from the run's seed
 * (schedule.ts clientSetups): the same for every incarnation of the worker.
 */
export interface ClientSetup {
  /**
   * rlock's own retries: a call whose connection dropped fails at once (ioredis and iovalkey
   * `maxRetriesPerRequest: 0`, node-redis `disableOfflineQueue`), so a release whose reply was
   * lost is retried by rlock in the background, and by the worker calling release() again.
   */
  readonly ownRetries: boolean;
  /** Connects as the run's ACL user, whose scripts the `refuse-scripts` fault refuses for a while. */
  readonly acl: boolean;
  /**
   * Its main LockClient runs a renewal thread (`renewalThread`, maxStall TIMING.maxStall),
   * connected through the same proxy with the same options, and its operations may stall the
   * worker's event loop (stall.ts).
   */
  readonly thread: boolean;
}

/** Sent to a worker on start (argv[2], as JSON). */
export interface WorkerConfig {
  readonly worker: number;
  readonly incarnation: number;
  readonly seed: number;
  readonly kinds: readonly Kind[];
  /** Per client: the URL of its proxy to the main server (if any kind uses it) and to each RedLock master. */
  readonly clients: readonly { readonly main: string | undefined; readonly red: readonly string[]; readonly setup: ClientSetup }[];
  readonly keyPrefix: string;
  /** The Redis client the LockClients run on. */
  readonly client: TortureClient;
  /** Concurrent operation loops per client. */
  readonly actorsPerClient: number;
  /** The renewal thread's program (a bundle of lib/renewal-thread/worker-main.ts) and its connect module (renewal.ts), as file URLs. */
  readonly renewal: { readonly worker: string; readonly connect: string };
}

export type WorkerEvent =
  | { readonly type: 'ready'; readonly t: number }
  /** A wait ended: the call was made at t0 with budget `budget` ms (the abort, if earlier, counts as the budget). */
  | {
      readonly type: 'wait';
      readonly t: number;
      readonly t0: number;
      readonly op: string;
      readonly kind: Kind;
      readonly names: readonly string[];
      readonly budget: number;
      /** Semaphores: how many permits the call asked for. */
      readonly permits?: number;
      readonly outcome: 'acquired' | 'timeout' | 'aborted' | 'error';
      readonly error?: string;
    }
  /**
   * A re-entry of `owner`'s hold is about to be asked for with lease `ttl`: sent before the call,
   * since the call may run in Redis (and extend the lock's TTL) even if the worker dies before
   * the answer.
   */
  | { readonly type: 'attempt'; readonly t: number; readonly names: readonly string[]; readonly owner: string; readonly ttl: number; readonly waitMs?: number }
  /** An acquisition resolved: hold `hold` of owner `owner` begins (a re-entry when `reentry`). */
  | {
      readonly type: 'acquired';
      readonly t: number;
      /** When the acquiring call was made. */
      readonly t0: number;
      readonly op: string;
      readonly hold: string;
      readonly kind: Kind;
      readonly names: readonly string[];
      readonly mode: HoldMode;
      readonly owner: string;
      readonly reentry: boolean;
      /** An adoption (locks.adopt) of this handed-off hold: the owner's hold goes on here. */
      readonly adoptedFrom?: string;
      /** The longest the hold lives in Redis without renewal, ms. */
      readonly ttl: number;
      readonly watchdog: boolean;
      readonly token?: number;
      /** Semaphores: how many permits the hold has. */
      readonly permits?: number;
      /** Taken with a maxHoldTime: the client may let go of it at the cap. */
      readonly capped?: boolean;
    }
  /**
   * The holder called the hold's release (sent before it waits for the answer): it stops holding
   * here even if it dies before the answer comes.
   */
  | { readonly type: 'release'; readonly t: number; readonly hold: string }
  /** The hold's release, called at t0, resolved (`ok`) or rejected at t. */
  | {
      readonly type: 'released';
      readonly t: number;
      readonly t0: number;
      readonly hold: string;
      readonly ok: boolean;
      readonly error?: string;
      /** The Lease's signal had aborted (its holder was told it lost the lock) when the answer came. */
      readonly aborted?: boolean;
    }
  /** The holder called release() again (try `n`, from 2) after the call before rejected; answered at t. */
  | {
      readonly type: 'retried';
      readonly t: number;
      readonly t0: number;
      readonly hold: string;
      readonly n: number;
      readonly ok: boolean;
      readonly error?: string;
      readonly aborted: boolean;
    }
  /**
   * What an owner holds by its own account, for the parent to compare with Redis at once: `live`
   * Leases (acquired, no release called, not told lost). `final`: every Lease of its operation
   * was released (none lost, no acquisition failed), so Redis must hold nothing for the owner: at
   * once when each release resolved; when `unanswered` of them rejected (even when called again),
   * once rlock's background retries of them had a quiet moment to get through, within the lease.
   */
  | {
      readonly type: 'owner-count';
      readonly t: number;
      readonly op: string;
      /** The worker's client the operation ran on (its proxies, for the quiet moment), and whether it connects as the ACL user. */
      readonly client: number;
      readonly acl: boolean;
      readonly owner: string;
      readonly kind: Kind;
      readonly names: readonly string[];
      readonly live: number;
      readonly final: boolean;
      readonly unanswered: number;
    }
  /** After a successful hand-off, the handing-off context asked the lock whether it holds it (`adopted`: after the adoption too). */
  | {
      readonly type: 'query';
      readonly t: number;
      readonly hold: string;
      readonly owner: string;
      readonly adopted: boolean;
      readonly held: boolean;
      readonly count: number;
    }
  /**
   * A hand-off of the hold is asked for (sent before the call): its owner may live on in another
   * client's adopted hold, which reports `acquired` with `adoptedFrom`, or `adopt-failed`.
   */
  | { readonly type: 'handoff'; readonly t: number; readonly hold: string; readonly owner: string }
  /** The hand-off or the adoption of the owner's hold failed: no adopted hold follows. */
  | { readonly type: 'adopt-failed'; readonly t: number; readonly owner: string; readonly error: string }
  /** The hold's Lease signal aborted: the holder was told it lost the lock. */
  | { readonly type: 'lost'; readonly t: number; readonly hold: string; readonly reason: string }
  /** A write to the fenced resource, with the hold's token. */
  | { readonly type: 'write'; readonly t: number; readonly hold: string; readonly name: string; readonly token: number }
  /** An observer of an election (tools/torture/election.ts) was told of a leader (epoch, value) or of none (null). */
  | { readonly type: 'observed'; readonly t: number; readonly observer: string; readonly name: string; readonly epoch: number | null; readonly value: string | null }
  /**
   * An operation on client `client` blocked the worker's event loop (a synchronous busy loop)
   * from t0 to t while holding (stall.ts): sent as it begins (`begin`, t = t0: a worker killed
   * meanwhile never sends the `end`) and once it resumed (`end`). `protected`: the holds the
   * worker's renewal threads renewed then (watchdog mode, no maxHoldTime, on a client whose
   * threads were all connected), which must be kept through it (or, past maxStall, told `stalled`
   * before anyone else gets in), each with its client and whether that client connects as the
   * ACL user.
   */
  | {
      readonly type: 'stall';
      readonly phase: 'begin' | 'end';
      readonly t: number;
      readonly t0: number;
      readonly client: number;
      readonly hold: string;
      readonly protected: readonly { readonly hold: string; readonly client: number; readonly acl: boolean }[];
    }
  /** A renewal thread of client `client` connected (`up`), or went down and left its renewals to the event loop (`down`, with the error). */
  | { readonly type: 'thread'; readonly t: number; readonly client: number; readonly which: string; readonly up: boolean; readonly error?: string }
  /** The worker stopped its loops and closed its clients. */
  | { readonly type: 'done'; readonly t: number; readonly errors: number }
  /** Still not done STUCK_REPORT_MS after it was asked to stop: what it is still doing (a 'did not stop' crash names it). */
  | { readonly type: 'stuck'; readonly t: number; readonly doing: string };

export type ParentMessage = { readonly type: 'stop' };
