// The torture worker's `election` kind: campaigns (bounded waits, some aborted) that lead for a
// while, proclaim a few values and resign, and in every client observers of each election that
// report every change they see. A leadership is reported as a hold (kind 'election', its epoch as
// the token), so the checker's exclusion check is "never two believed leaders at once" and its
// token check "epochs strictly increase"; election-checks.ts checks the observers.
import { LockAcquireTimeoutError, LockLostError, type LockClient, type Leadership } from '../../lib/index.js';
import { now, type WorkerEvent } from './events.js';
import { Prng, TIMING } from './schedule.js';

/** The elections of a run. */
export const ELECTION_NAMES = ['election-0', 'election-1'] as const;

/** What the election operations need from the worker. */
export interface ElectionWorker {
  readonly send: (event: WorkerEvent) => void;
  readonly nextId: () => string;
  readonly sleep: (ms: number) => Promise<void>;
  readonly describe: (error: unknown) => string;
  readonly stopping: () => boolean;
}

/** A leader's value: its hold id and how many proclaims it made before (`hold#n`). */
export const leaderValue = (hold: string, n: number): string => `${hold}#${n}`;

/** One campaign: wait (bounded), lead for a while with proclaims, resign. `led`: told of each leadership (its hold id and signal) once reported. */
export async function electionOperation(client: LockClient, rng: Prng, w: ElectionWorker, led?: (hold: string, signal: AbortSignal) => void): Promise<void> {
  const name = rng.pick(ELECTION_NAMES);
  const op = w.nextId();
  const hold = w.nextId();
  const waitTime = rng.chance(0.15) ? 0 : rng.int(50, 2_500);
  const controller = new AbortController();
  let budget = waitTime;
  let abortTimer: NodeJS.Timeout | undefined;
  if (rng.chance(0.15)) {
    const abortAt = rng.int(0, waitTime + 200);
    budget = Math.min(budget, abortAt);
    abortTimer = setTimeout(() => controller.abort(new Error('torture: aborted')), abortAt);
  }
  // Mostly short terms (many successions); some long (the watchdog and the holder's clock at work).
  const leadFor = rng.chance(0.7) ? rng.int(0, 300) : rng.int(0, TIMING.watchdogTimeout * 3);
  const proclaims = rng.int(0, 3);
  const t0 = now();
  const base = { type: 'wait', t0, op, kind: 'election', names: [name], budget } as const;
  let leadership: Leadership;
  try {
    leadership = await client.getElection(name).campaign({ value: leaderValue(hold, 0), waitTime, signal: controller.signal });
  } catch (error) {
    clearTimeout(abortTimer);
    const outcome = controller.signal.aborted ? 'aborted' : error instanceof LockAcquireTimeoutError ? 'timeout' : 'error';
    w.send({ ...base, t: now(), outcome, error: outcome === 'error' ? w.describe(error) : undefined });
    return;
  }
  clearTimeout(abortTimer);
  const t1 = now();
  w.send({ ...base, t: t1, outcome: 'acquired' });
  w.send({
    type: 'acquired',
    t: t1,
    t0,
    op,
    hold,
    kind: 'election',
    names: [name],
    mode: 'excl',
    owner: leadership.owner,
    reentry: false,
    ttl: TIMING.watchdogTimeout,
    watchdog: true,
    token: leadership.epoch,
  });
  const onLost = (): void => {
    const reason: unknown = leadership.signal.reason;
    const why = reason instanceof LockLostError ? reason.reason : reason instanceof Error ? reason.name : 'unknown';
    w.send({ type: 'lost', t: now(), hold, reason: why });
  };
  if (leadership.signal.aborted) onLost();
  else leadership.signal.addEventListener('abort', onLost, { once: true });
  led?.(hold, leadership.signal);
  for (let n = 1; n <= proclaims; n += 1) {
    await w.sleep(Math.round(leadFor / (proclaims + 1)));
    // A careful leader checks its signal before acting.
    if (leadership.signal.aborted) break;
    await leadership.proclaim(leaderValue(hold, n)).catch(() => undefined);
  }
  await w.sleep(Math.round(leadFor / (proclaims + 1)));
  const r0 = now();
  w.send({ type: 'release', t: r0, hold });
  try {
    await leadership.resign();
    w.send({ type: 'released', t: now(), t0: r0, hold, ok: true });
  } catch (error) {
    w.send({ type: 'released', t: now(), t0: r0, hold, ok: false, error: w.describe(error) });
  }
}

/** Observes every election from `client` until the worker stops, reporting each change it sees. */
export function observeElections(client: LockClient, observer: string, w: ElectionWorker): { stop: () => Promise<void> } {
  const controller = new AbortController();
  const loops = ELECTION_NAMES.map(async (name) => {
    // A loop that fails (its client's connection failed to subscribe) starts again.
    while (!controller.signal.aborted && !w.stopping()) {
      try {
        for await (const leader of client.getElection(name).observe({ signal: controller.signal })) {
          w.send({ type: 'observed', t: now(), observer: `${observer}/${name}`, name, epoch: leader?.epoch ?? null, value: leader?.value ?? null });
        }
      } catch {
        await w.sleep(100);
        continue;
      }
      return;
    }
  });
  return {
    stop: async () => {
      controller.abort();
      await Promise.all(loops);
    },
  };
}
