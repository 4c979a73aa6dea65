import type { HeldRequest } from '../scripts/registry.js';

/** First and last pause between the tries that learn a lost attempt's answer, ms. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 1_000;

/** An attempt's one request, kept until its answer is known: a try that learns it sends the same. */
class AttemptRequest implements HeldRequest {
  request: HeldRequest['request'] = undefined;
  done = false;

  close(): void {
    if (this.done) return;
    this.done = true;
    this.request?.close();
  }
}

/** What an acquisition attempt is made of: one object per attempt, not a closure per part. */
export interface AttemptCalls<T> {
  /** Sends the attempt with the request `held` keeps (the lock's request window). */
  send(held: HeldRequest): Promise<T>;
  /** The reply says it acquired. */
  took(reply: T): boolean;
  /** Gives back a hold it made. */
  undo(): void;
  /** Undoes what an attempt that did not acquire leaves (a fair waiter's queue place), if anything. */
  missed(): void;
  /** Throws once the client is closed. */
  assertOpen(): void;
}

/**
 * Sends one acquisition attempt. When it fails without an answer (its reply lost, the connection
 * gone, Redis refusing it), Redis may have run it: the caller gets the error at once, and the same
 * request is sent again in the background (answered from the owner's call log if it ran, or run
 * now) until an answer comes or `forMs` has passed (the attempt's lease: its hold is gone by then
 * either way). A hold it made is given back with `undo`, and `missed` undoes what an attempt that
 * did not acquire leaves (a fair waiter's queue place, which the caller left already and the
 * resend took again), so an acquisition that rejects leaves nothing behind.
 */
export function sendAttempt<T>(calls: AttemptCalls<T>, forMs: number): Promise<T> {
  const held = new AttemptRequest();
  let sent: Promise<T>;
  try {
    sent = calls.send(held);
  } catch (error) {
    held.close();
    return Promise.reject(error);
  }
  return sent.then(
    (reply) => {
      held.close();
      return reply;
    },
    (error: unknown) => {
      void settleLost(calls, held, performance.now() + forMs);
      throw error;
    },
  );
}

async function settleLost<T>(calls: AttemptCalls<T>, held: AttemptRequest, until: number): Promise<void> {
  let pauseMs = RETRY_FIRST_MS;
  try {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs).unref());
      pauseMs = Math.min(pauseMs * 2, RETRY_MAX_MS);
      if (performance.now() >= until) return;
      let reply: T;
      try {
        calls.assertOpen();
      } catch {
        return;
      }
      try {
        reply = await calls.send(held);
      } catch {
        continue;
      }
      // Its hold has no Lease: the caller was told the attempt failed.
      if (calls.took(reply)) calls.undo();
      else calls.missed();
      return;
    }
  } finally {
    held.close();
  }
}

/** `took` for attempts that answer `{ acquired }`. */
export const tookIt = <T extends { readonly acquired: boolean }>(reply: T): boolean => reply.acquired;

/** `took` for the read-write scripts: nil (null) when acquired, else the holder's TTL. */
export const granted = (reply: unknown): boolean => reply === null;
