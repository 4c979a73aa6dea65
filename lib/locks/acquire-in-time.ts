import type { HoldsLeft } from '../scripts/registry.js';
import type { LockCore } from '../core.js';
import { holdDrift, type Hold } from '../holding/holds.js';
import { confirmReplicas } from '../holding/confirm-replicas.js';
import { AcquireTrack } from '../telemetry/channels.js';
import { acquireTracing, isTraced } from '../telemetry/tracing.js';
import { raceDeadline, TIMED_OUT, type Acquired } from '../waiting/wait.js';

// One acquisition call of a lock, from its first attempt to the recorded hold: an answer that
// came after the lease it granted ran out is no acquisition, and is asked again within the wait.

/** One owner's acquisition call, as a lock kind makes it. */
export interface AcquireCall {
  readonly core: LockCore;
  readonly name: string;
  /** The lock and kind in the client's hold records. */
  readonly lockId: string;
  readonly lockKey: string;
  readonly owner: string;
  /** Taken outside any lock context, with an owner id made for this call: no hold or other call of it exists yet. */
  readonly unscoped: boolean;
  /** ms to wait; undefined: without limit; 0: one attempt. */
  readonly waitMs: number | undefined;
  /** The lease each attempt asks Redis for, ms. */
  readonly ttlMs: number;
  readonly signal: AbortSignal | undefined;
  /** One acquisition (the kind's script and waiting strategy) within `left` ms. */
  attempt(left: number | undefined): Promise<Acquired | false>;
  /** The owner's hold before an attempt (a re-entry), as the client's records have it. */
  holdBefore(): Hold | undefined;
  /** Releases one hold of the owner quietly: an acquisition nobody waits for any more. */
  abandon(): void;
  /** Releases the acquisition at once: the replicas did not confirm it. */
  rollBack(): Promise<HoldsLeft>;
  /** Records the hold; called synchronously with the reply, before user code runs. */
  confirmed(acquired: Acquired): void;
}

/**
 * Runs `call` as one published (and traced) acquisition; resolves with it, or false when the wait
 * ran out. It counts as a call of its owner on the lock until it settled: a hand-off of the
 * owner's hold is refused meanwhile, and it is refused while one is under way (hold-calls.ts).
 * An unscoped call's owner is made for it: it has no hold to hand off, so it is not counted.
 */
export function acquireInTime(call: AcquireCall): Promise<Acquired | false> {
  const { calls } = call.core.holds;
  let key: string | undefined;
  try {
    call.signal?.throwIfAborted();
    if (!call.unscoped) key = calls.enterAcquisition(call.lockKey, call.owner, call.name);
  } catch (error) {
    return Promise.reject(error);
  }
  let running: Promise<Acquired | false>;
  try {
    const track = new AcquireTrack(call.core.clientId, call.lockId, call.name, call.owner, { server: call.core.redis.address, signal: call.signal });
    // Untraced (nearly always), no closure for the trace.
    running = isTraced(acquireTracing) ? track.run(() => acquireTracked(call, track)) : acquireTracked(call, track);
  } catch (error) {
    if (key !== undefined) calls.leave(key);
    return Promise.reject(error);
  }
  if (key === undefined) return running;
  const counted = key;
  return running.then(
    (acquired) => {
      calls.leave(counted);
      return acquired;
    },
    (error: unknown) => {
      calls.leave(counted);
      throw error;
    },
  );
}

function acquireTracked(call: AcquireCall, track: AcquireTrack): Promise<Acquired | false> {
  const deadline = call.waitMs === undefined ? Infinity : performance.now() + call.waitMs;
  return afterReleases(call, track, deadline);
}

function afterReleases(call: AcquireCall, track: AcquireTrack, deadline: number): Promise<Acquired | false> {
  // A release of the owner still on its way may be the one that ends the hold in Redis (whichever
  // the client thought final: another may have been applied unseen); resent after this
  // acquisition, it would find the hold this acquisition makes (whose call log does not know it)
  // and take a count of it. They settle first.
  const releasing = call.holdBefore()?.releases;
  if (!releasing || releasing.length === 0) return attemptInTime(call, track, deadline);
  const settled: Promise<unknown> = releasing.length === 1 ? releasing[0]!.settled : Promise.all(releasing.map((release) => release.settled));
  return raceDeadline(settled, deadline, call.signal).then((result) => (result === TIMED_OUT ? track.gaveUp() : afterReleases(call, track, deadline)));
}

/**
 * One attempt, and the next while an answer comes after the lease it granted ran out: a chain of
 * promises rather than an async frame, since nearly every call takes one attempt.
 */
function attemptInTime(call: AcquireCall, track: AcquireTrack, deadline: number): Promise<Acquired | false> {
  const left = call.waitMs === undefined ? undefined : Math.max(0, Math.ceil(deadline - performance.now()));
  // A hold whose clock ran out (its timer held up by a blocked loop) is let go first: this attempt
  // then takes the lock afresh instead of re-entering what Redis may have dropped.
  const before = call.holdBefore();
  if (before) call.core.holds.judgeDue(before);
  const reentered = before && call.holdBefore();
  let pending: Promise<Acquired | false>;
  try {
    pending = call.attempt(left);
  } catch (error) {
    return Promise.reject(track.failed(error));
  }
  return pending.then(
    (acquired) => {
      if (acquired === false) return track.gaveUp();
      track.attempted(acquired);
      // An answer that came after the lease it granted ran out (by the holder's clock) is no
      // acquisition: someone else may hold the lock already. Let go, and ask again in time.
      // A re-entry of a hold the clock ended while the call was out: the let-go of that hold,
      // sent for the same owner, may have taken this acquisition away in Redis. Same remedy.
      if (performance.now() < acquired.sentAt + call.ttlMs - holdDrift(call.ttlMs) && !reentered?.letGoSent) return confirm(call, track, acquired);
      call.abandon();
      if (left === 0 || performance.now() >= deadline) return track.gaveUp();
      return attemptInTime(call, track, deadline);
    },
    (error: unknown) => {
      throw track.failed(error);
    },
  );
}

/** A timely acquisition: the replicas confirm it (`syncReplicas`), then the hold is recorded. */
function confirm(call: AcquireCall, track: AcquireTrack, acquired: Acquired): Acquired | Promise<Acquired> {
  const { core } = call;
  if (core.syncReplicas) {
    return confirmReplicas(core, call.name, call.lockKey, () => call.rollBack(), () => call.abandon()).then(() => recorded(call, track, acquired));
  }
  return recorded(call, track, acquired);
}

function recorded(call: AcquireCall, track: AcquireTrack, acquired: Acquired): Acquired {
  // Synchronously with the reply: the holder's clock (and renewal) start before user code runs.
  call.confirmed(acquired);
  call.core.events.emit('acquired', track.acquired());
  return acquired;
}
