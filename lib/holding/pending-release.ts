import type { HoldsLeft } from '../scripts/registry.js';
import type { HeldRequest, WindowRequest } from '../scripts/registry.js';

/**
 * One release of a hold, from its first try to Redis' answer: a failed try (or one with no answer in
 * time) goes on in the background with the same request, kept here (HeldRequest) until it is done.
 */
export class PendingRelease implements HeldRequest {
  /** The hold count Redis answered once a retry got through; undefined while none has. */
  left: HoldsLeft | undefined = undefined;
  #done = false;
  #settled: Promise<void> | undefined;
  #resolve: (() => void) | undefined;

  /** The request sent with every try, so Redis applies the release once; made at the first try. */
  request: WindowRequest | undefined = undefined;

  /** `reExpireMs` is the TTL the lock keeps at least when holds remain. */
  constructor(readonly reExpireMs: number) {}

  /** Redis answered this release (a first try or a retry), or its retries stopped: it is sent no more. */
  get done(): boolean {
    return this.#done;
  }

  /** Resolves once `done`; made only when someone waits (most releases are answered unseen). */
  get settled(): Promise<void> {
    this.#settled ??= this.#done ? Promise.resolve() : new Promise<void>((resolve) => (this.#resolve = resolve));
    return this.#settled;
  }

  finish(): void {
    this.#done = true;
    // Its request stays in use until every copy sent is settled (request-window.ts).
    this.request?.close();
    this.#resolve?.();
  }
}

/** Where a Lease remembers its release once it failed, so that a retry sends the same request. */
export interface ReleaseTicket {
  pending?: PendingRelease;
  /**
   * The hold record the Lease was issued from. Once that hold was lost (and let go of in Redis by
   * the client), a later hold of the same owner is another record: the Lease releases nothing of it.
   */
  readonly of?: object;
}
