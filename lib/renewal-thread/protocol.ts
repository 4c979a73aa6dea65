import type { ReplicaAck } from '../redis/port.js';
import type { RenewScript } from '../scripts/script-types.js';

/** What the main thread hands its renewal thread at start (structured-cloned: no functions). */
export interface RenewalThreadData {
  readonly buffer: SharedArrayBuffer;
  /** The module whose default export returns the thread's connected client (a URL's href). */
  readonly connect: string;
  readonly leaseMs: number;
  readonly maxStallMs: number;
  /** What the thread's connection must match the main one in: the same keys, the same server. */
  readonly keyPrefix: string;
  readonly db: number;
  readonly cluster: boolean;
  readonly syncReplicas: ReplicaAck | undefined;
}

/** Main thread → renewal thread. */
export type ToThread =
  /** Renew this hold (its slot was made Active before this was sent). */
  | { readonly type: 'hold'; readonly slot: number; readonly generation: number; readonly script: RenewScript; readonly keys: readonly string[]; readonly holder: string }
  /** The hold ended (its slot was made Ended before this was sent): forget it, give the slot back. */
  | { readonly type: 'end'; readonly slot: number; readonly generation: number }
  /** Close the connection and stop. */
  | { readonly type: 'close' };

/** Renewal thread → main thread. */
export type FromThread =
  /** Connected: from now on it renews. */
  | { readonly type: 'ready' }
  /** It could not connect (or its connection does not match the main one): the main thread renews. */
  | { readonly type: 'failed'; readonly message: string }
  /** Renewals confirmed (their times are in the slots). */
  | { readonly type: 'renewed'; readonly slots: readonly number[] }
  /** A slot moved to Gone, Taken or Stalled. */
  | { readonly type: 'changed'; readonly slots: readonly number[] }
  /** A renewal call failed; it is retried soon. */
  | { readonly type: 'error'; readonly name: string; readonly message: string }
  /** The slot (of that generation) is forgotten: the main thread may give it out again. */
  | { readonly type: 'freed'; readonly slot: number; readonly generation: number }
  /** The connection is closed; the thread ends. */
  | { readonly type: 'closed' };
