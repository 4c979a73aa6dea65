/**
 * How often a call whose connection dropped before its answer is sent again (ioredis' default
 * `maxRetriesPerRequest`): node-redis and GLIDE reject such a call although Redis may have run it.
 */
export const MAX_RESENDS = 20;

/** When a failed call may be sent again, and how the resends are paced. */
export interface ResendPolicy {
  /** Whether a call that failed with `error` may be sent again (the connection lost its answer). */
  resendable(error: unknown): boolean;
  /** Whether to wait before flushing (a client that refuses calls while it has no connection). */
  readonly backOff: boolean;
  /** Whether a resend goes to the front of the client's queue (node-redis `asap`): then they are sent last first. */
  readonly toFront: boolean;
}

/**
 * Sends calls and, as ioredis does, sends a call again when its answer was lost: every call rlock
 * makes is idempotent under resend (the request window). Order is kept: resends go ahead of calls
 * made later, in their first order, and a call made while resends wait goes behind them (a
 * RedLock's undo relies on running after the attempt it undoes, on each node's connection).
 */
export class Resender {
  readonly #policy: ResendPolicy;
  /** Calls to send again once the connection is back, in the order they were rejected. */
  readonly #resends: (() => void)[] = [];
  /** Calls made while resends wait: sent behind them. */
  readonly #joined: (() => void)[] = [];

  constructor(policy: ResendPolicy) {
    this.#policy = policy;
  }

  /** Sends a call; `send` is told whether this sending is a resend. */
  send<T>(send: (resend: boolean) => Promise<T>, attempt = 0): Promise<T> {
    if (attempt === 0 && this.#resends.length + this.#joined.length > 0) {
      return new Promise((resolve, reject) => this.#queue(false, () => void this.send(send).then(resolve, reject)));
    }
    return send(attempt > 0).catch((error: unknown) => {
      if (attempt >= MAX_RESENDS || !this.#policy.resendable(error)) throw error;
      return new Promise<T>((resolve, reject) => {
        this.#queue(true, () => void this.send(send, attempt + 1).then(resolve, reject), attempt);
      });
    });
  }

  /**
   * Calls waiting to be sent: resends (in the order they were rejected) and calls made meanwhile.
   * Flushed together: the resends first (ahead of what the client queued, where it can put them
   * there), in order, then the others. A client that queues what it
   * cannot send yet is flushed at once; one that refuses calls while offline backs off.
   */
  #queue(resend: boolean, send: () => void, attempt = 0): void {
    if (this.#resends.length === 0 && this.#joined.length === 0) {
      const flush = (): void => {
        const resends = this.#resends.splice(0);
        const joined = this.#joined.splice(0);
        if (this.#policy.toFront) resends.reverse();
        for (const resend of resends) resend();
        for (const call of joined) call();
      };
      if (!this.#policy.backOff) setImmediate(flush);
      else setTimeout(flush, Math.min(10 * 2 ** attempt, 500));
    }
    (resend ? this.#resends : this.#joined).push(send);
  }
}
