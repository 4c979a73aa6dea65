// Torture worker: handing a hold to another client of the worker (lease.handOff(), then
// locks.adopt(), or redLock.adopt() for a RedLock's hold).
// The events tell the checker that the owner lives on in the adopted hold, so the hand-off is not
// taken for the owner's last hold ending (the stuck probe) and the gap is believed too.
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
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const t0 = now();
  let lease: Lease;
  try {
    lease = await adopt(JSON.parse(text) as LeaseHandle);
  } catch (error) {
    send({ type: 'adopt-failed', t: now(), owner, error: `adopt: ${ctx.describe(error)}` });
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
  return { lease, hold };
}
