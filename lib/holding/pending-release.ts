import type { HoldsLeft } from '../scripts/registry.js';
import type { HeldRequest, WindowRequest } from '../scripts/registry.js';

/**
 * One release of a hold, from its first try to Redis' answer. It owns its one request: every try
 * (the first, background retries, `release()` again on its Lease) sends that request, so Redis
 * applies the release once; it closes the request once, when it is `done`.
 */
export class PendingRelease implements HeldRequest {
  /** The hold count Redis answered once a try got through; undefined while none has. */
  left: HoldsLeft | undefined = undefined;
  /** A failed try left it to background retries: someone must collect its answer (releaseHold). */
  retried = false;
  /** Made for `unlock()` (no Lease): `unlock()` again may collect it. */
  readonly unticketed: boolean;
  #done = false;
  #settled: Promise<void> | undefined;
  #resolve: (() => void) | undefined;

  /** Its request, set by the request window at the first send (request-window.ts). */
  request: WindowRequest | undefined = undefined;

  /** `reExpireMs` is the TTL the lock keeps at least when holds remain. */
  constructor(
    readonly reExpireMs: number,
    unticketed: boolean,
  ) {
    this.unticketed = unticketed;
  }

  /** Redis answered this release (a first try or a retry), or its retries stopped: it is sent no more. */
  get done(): boolean {
    return this.#done;
  }

  /** Resolves once `done`; made only when someone waits (most releases are answered unseen). */
  get settled(): Promise<void> {
    this.#settled ??= this.#done ? Promise.resolve() : new Promise<void>((resolve) => (this.#resolve = resolve));
    return this.#settled;
  }

  /** Sent no more. Once: later calls change nothing (the first try and the retries both end here). */
  finish(): boolean {
    if (this.#done) return false;
    this.#done = true;
    // Its request stays in use until every copy sent is settled (request-window.ts).
    this.request?.close();
    this.#resolve?.();
    return true;
  }
}

/** Where a Lease remembers its release once it was sent, so that a retry sends the same request. */
export interface ReleaseTicket {
  pending?: PendingRelease;
  /**
   * The hold record the Lease was issued from. Once that hold was lost (and let go of in Redis by
   * the client), a later hold of the same owner is another record: the Lease releases nothing of it.
   */
  readonly of?: object;
}
