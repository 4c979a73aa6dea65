import { LockClientClosedError, LockLostError, type LockLostReason, type RedLockQuorumError } from '../errors.js';
import { RENEW_RETRY_MS } from '../options.js';
import { driftOf } from './quorum.js';

/** What one renewal round over every node found. */
export type RenewOutcome =
  /** A majority renewed. */
  | { readonly kind: 'renewed'; readonly startedAt: number; readonly decidedAt: number }
  /** So many nodes lost the lock (gone or held by another owner) that no majority can renew it. */
  | { readonly kind: 'refused'; readonly error: RedLockQuorumError }
  /** No majority this time because nodes failed or timed out: worth another try. */
  | { readonly kind: 'failed'; readonly error: RedLockQuorumError };

export interface RedHoldConfig {
  readonly lockName: string;
  readonly owner: string;
  /** TTL set by every renewal (the watchdog lease), ms. */
  readonly renewTtlMs: number;
  /** Renewals allowed; undefined: no cap. */
  readonly maxRenewals: number | undefined;
  /** One renewal round on every node. */
  renew(): Promise<RenewOutcome>;
  renewed(): void;
  lost(reason: LockLostReason): void;
  /** False once the client the RedLock reports to is closed: renewal then stops silently. */
  isOpen(): boolean;
  /** The hold ended (released, lost, expired, client closed): forget it. */
  forget(hold: RedHold): void;
}

/**
 * One owner's hold on one RedLock in this process: its re-entry count, the end of its validity
 * time and its leases. In watchdog mode it renews on every node every third of the lease and
 * counts a renewal only when a majority answered within the validity time; when the validity
 * runs out without one, the hold is lost and its leases are aborted.
 */
export class RedHold {
  /** Holds of the owner: re-entries count. */
  count = 0;
  /** Releases in flight: a renewal that finds the lock gone meanwhile is no loss. */
  releasing = 0;
  /** Leases to abort when the hold is lost or expires. */
  readonly leases = new Set<AbortController>();
  readonly #config: RedHoldConfig;
  #validUntil = 0;
  #watchdog = false;
  #renewals = 0;
  #lastFailure: RedLockQuorumError | undefined;
  #renewTimer: NodeJS.Timeout | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(config: RedHoldConfig) {
    this.#config = config;
  }

  /** Renewed in watchdog mode (a re-entry with a fixed lease does not stop that). */
  get watchdog(): boolean {
    return this.#watchdog;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** An acquisition (or re-entry) succeeded; its round was sent at `startedAt`, valid until `validUntil`. */
  acquired(startedAt: number, validUntil: number, watchdog: boolean): void {
    this.count += 1;
    // Each acquisition sets the TTL on the nodes anew, so the latest one decides the validity.
    this.#validUntil = validUntil;
    this.#armExpiry();
    if (watchdog && !this.#watchdog) {
      this.#watchdog = true;
      if (!this.#capped()) this.#scheduleRenewal(startedAt + this.#config.renewTtlMs / 3 - performance.now());
    }
  }

  /** One hold was released; true when it was the last. */
  released(): boolean {
    this.count -= 1;
    if (this.count <= 0) this.end();
    return this.#ended;
  }

  /** Stops renewal and expiry; the hold is forgotten. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#expiryTimer);
    this.#config.forget(this);
  }

  #armExpiry(): void {
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = setTimeout(() => this.#expire(), Math.max(0, this.#validUntil - performance.now()));
    this.#expiryTimer.unref();
  }

  #scheduleRenewal(delayMs: number): void {
    clearTimeout(this.#renewTimer);
    this.#renewTimer = setTimeout(() => void this.#renew(), Math.max(0, delayMs));
    this.#renewTimer.unref();
  }

  #capped(): boolean {
    const { maxRenewals } = this.#config;
    return maxRenewals !== undefined && this.#renewals >= maxRenewals;
  }

  #expire(): void {
    if (this.#ended) return;
    const { lockName, maxRenewals } = this.#config;
    if (!this.#watchdog) {
      // As with a plain lock: the end of a fixed lease is news only to a Lease holder.
      if (this.leases.size === 0) this.end();
      else this.#lose('expired', `lease of RedLock "${lockName}" ran out before release`);
    } else if (this.#capped()) {
      this.#lose('expired', `RedLock "${lockName}" expired after its last allowed renewal (maxRenewals: ${maxRenewals})`);
    } else {
      this.#lose(
        'quorum',
        `RedLock "${lockName}" was lost: no renewal reached a majority of its nodes within the validity time`,
        this.#lastFailure,
      );
    }
  }

  async #renew(): Promise<void> {
    this.#renewTimer = undefined;
    if (this.#ended) return;
    if (!this.#config.isOpen()) {
      // The client was closed: renewal stops here, and the holder is told so.
      this.end();
      const error = new LockClientClosedError(`the LockClient was closed: RedLock "${this.#config.lockName}" is no longer renewed`);
      for (const lease of this.leases) lease.abort(error);
      return;
    }
    const { renewTtlMs, lockName } = this.#config;
    const outcome = await this.#config.renew();
    // Released, lost or expired while the round was out: its answer says nothing now.
    if (this.#ended) return;
    if (outcome.kind === 'renewed') {
      // Only a majority within the validity time counts: past it the holder could no longer
      // assume it held the lock. (The expiry timer had not run yet: the event loop was busy.)
      if (outcome.decidedAt >= this.#validUntil) {
        this.#expire();
        return;
      }
      this.#validUntil = outcome.startedAt + renewTtlMs - driftOf(renewTtlMs);
      this.#renewals += 1;
      this.#lastFailure = undefined;
      this.#armExpiry();
      this.#config.renewed();
      if (!this.#capped()) this.#scheduleRenewal(outcome.startedAt + renewTtlMs / 3 - performance.now());
      return;
    }
    this.#lastFailure = outcome.error;
    if (outcome.kind === 'refused' && this.releasing === 0) {
      this.#lose('quorum', `RedLock "${lockName}" was lost: a majority of its nodes no longer hold it for this owner`, outcome.error);
      return;
    }
    this.#scheduleRenewal(Math.min(RENEW_RETRY_MS, renewTtlMs / 3));
  }

  #lose(reason: LockLostReason, message: string, cause?: RedLockQuorumError): void {
    this.end();
    const error = new LockLostError(message, reason, { lockName: this.#config.lockName, cause });
    for (const lease of this.leases) lease.abort(error);
    this.#config.lost(reason);
  }
}
