/** What the parent and the workers say to each other over IPC. */
import type { Kind, TortureClient } from './args.js';

/** Wall-clock ms with sub-ms precision, monotonic within a process and comparable across processes on one machine. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** How a hold takes its lock: exclusively, or as a read (shared with other reads) or write side of a read-write lock. */
export type HoldMode = 'excl' | 'read' | 'write';

/** Sent to a worker on start (argv[2], as JSON). */
export interface WorkerConfig {
  readonly worker: number;
  readonly incarnation: number;
  readonly seed: number;
  readonly kinds: readonly Kind[];
  /** Per client: the URL of its proxy to the main server (if any kind uses it) and to each RedLock master. */
  readonly clients: readonly { readonly main: string | undefined; readonly red: readonly string[] }[];
  readonly keyPrefix: string;
  /** The Redis client the LockClients run on. */
  readonly client: TortureClient;
  /** Concurrent operation loops per client. */
  readonly actorsPerClient: number;
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
  | { readonly type: 'attempt'; readonly t: number; readonly names: readonly string[]; readonly owner: string; readonly ttl: number }
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
  /** The worker stopped its loops and closed its clients. */
  | { readonly type: 'done'; readonly t: number; readonly errors: number };

export type ParentMessage = { readonly type: 'stop' };
