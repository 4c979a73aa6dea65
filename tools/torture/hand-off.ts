// Torture worker: handing a hold to another client of the worker (lease.handOff(), then
// locks.adopt(), or redLock.adopt() for a RedLock's hold).
// The events tell the checker that the owner lives on in the adopted hold, so the hand-off is not
// taken for the owner's last hold ending (the stuck probe) and the gap is believed too. Once the
// hand-off went through, the handing-off context asks the lock whether it holds it, before and
// after the adoption: it must answer as for a lock it does not hold (false, 0).
import { LockLostError, type Lease, type LeaseHandle } from '../../lib/index.js';
import { now, type HoldMode, type WorkerEvent } from './events.js';
import type { Kind } from './args.js';

/** What the worker tracks of one hold. */
export interface MovedHold {
  readonly lease: Lease;
  readonly hold: string;
}

export interface HandOffContext {
  readonly send: (event: WorkerEvent) => void;
  readonly nextId: () => string;
  readonly describe: (error: unknown) => string;
  readonly op: string;
  readonly kind: Kind;
  readonly names: readonly string[];
  readonly mode: HoldMode;
  /** The lease the hold was taken with (undefined: watchdog mode), and the cap it got. */
  readonly ttl: number;
  readonly watchdog: boolean;
  /** The lock's isHeldByCurrentOwner() and getHoldCount(), in the handing-off context. */
  readonly query: () => Promise<{ held: boolean; count: number }>;
}

/** A query gets this long to answer (a silent connection may never): then it is not reported. */
const QUERY_WAIT_MS = 3_000;

/** Asks `ctx.query` (bounded) and reports the answer; a failed or late query reports nothing. */
async function ask(ctx: HandOffContext, hold: string, owner: string, adopted: boolean): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), QUERY_WAIT_MS)));
  try {
    const answer = await Promise.race([ctx.query(), late]);
    if (answer) ctx.send({ type: 'query', t: now(), hold, owner, adopted, held: answer.held, count: answer.count });
  } catch {
    // Not answered (a fault): nothing to judge.
  } finally {
    clearTimeout(timer);
  }
}

/** Reports the Lease's signal as the hold's `lost`. */
export function reportLoss(send: (event: WorkerEvent) => void, lease: Lease, hold: string): void {
  const onLost = (): void => {
    const reason: unknown = lease.signal.reason;
    const why =
      reason instanceof LockLostError ? reason.reason : reason instanceof Error ? reason.name : typeof reason === 'string' ? reason : 'unknown';
    send({ type: 'lost', t: now(), hold, reason: why });
  };
  if (lease.signal.aborted) onLost();
  else lease.signal.addEventListener('abort', onLost, { once: true });
}

/**
 * Hands `from`'s hold off and adopts it with `adopt` (another client's; a JSON round trip in
 * between, as through a queue), after `delayMs`. Resolves with the adopted hold, or with `from` when the
 * hand-off was refused (it is still held), or undefined when the hold ended on the way.
 */
export async function moveHold(
  ctx: HandOffContext,
  from: MovedHold,
  adopt: (handle: LeaseHandle) => Promise<Lease>,
  delayMs: number,
): Promise<MovedHold | undefined> {
  const { send, op } = ctx;
  const owner = from.lease.owner;
  send({ type: 'handoff', t: now(), hold: from.hold, owner });
  let text: string;
  try {
    text = JSON.stringify(await from.lease.handOff());
  } catch (error) {
    send({ type: 'adopt-failed', t: now(), owner, error: `handOff: ${ctx.describe(error)}` });
    return from.lease.signal.aborted ? undefined : from;
  }
  // In this context, from now on, the lock is not held (whoever adopts it, and before anyone does).
  const asked = ask(ctx, from.hold, owner, false);
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const t0 = now();
  let lease: Lease;
  try {
    lease = await adopt(JSON.parse(text) as LeaseHandle);
  } catch (error) {
    send({ type: 'adopt-failed', t: now(), owner, error: `adopt: ${ctx.describe(error)}` });
    await Promise.all([asked, ask(ctx, from.hold, owner, true)]);
    return undefined;
  }
  const hold = ctx.nextId();
  send({
    type: 'acquired',
    t: now(),
    t0,
    op,
    hold,
    kind: ctx.kind,
    names: ctx.names,
    mode: ctx.mode,
    owner: lease.owner,
    reentry: false,
    adoptedFrom: from.hold,
    ttl: ctx.ttl,
    watchdog: ctx.watchdog,
    token: lease.token,
  });
  reportLoss(send, lease, hold);
  await Promise.all([asked, ask(ctx, from.hold, owner, true)]);
  return { lease, hold };
}
