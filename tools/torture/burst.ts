// Torture worker: a burst of re-entries. One owner takes many holds of its lock at once, lets most
// of them go at once and keeps the rest a while, so a swallow or a reset that lands in it makes the
// client resend many calls of one owner at once. Each must count once: a re-entry counted twice
// keeps the lock after the owner's last release (`stuck`); a release applied twice frees the lock
// under holds still believed (`exclusion`, `told-late`, `not-held`, `owner-count`).
// A *wide* burst has more calls in flight than the request window lets out at once
// (REQUEST_SPAN, 64, of one client on one lock): the calls beyond wait for room, and its releases
// too when a silence or a refusal lands in it. Half of them hold with a fixed lease longer than
// the 5 s a release waits for its answer, so that a release still waiting for room times out while
// the hold stands, and is called again.
import type { Prng } from './schedule.js';
import { TIMING } from './schedule.js';

/** One burst: how many re-entries at once, how many of them are kept after the rest went, how long. */
export interface Burst {
  readonly size: number;
  readonly keep: number;
  readonly keepForMs: number;
  /** How long every re-entry is held before the first releases (0 for the narrow bursts). */
  readonly holdMs?: number;
}

/** A burst's sizes, drawn with the operation's other choices. */
export function drawBurst(rng: Prng): Burst {
  return { size: rng.int(20, 150), keep: rng.int(1, 15), keepForMs: rng.int(0, 300) };
}

/** The calls of one client on one lock that may be out at once (lib/scripts/request-window.ts). */
export const REQUEST_SPAN = 64;

/** A wide burst: the operation's lease, its re-entries' lease and wait, and its sizes. */
export interface WideBurst extends Burst {
  /** The outer hold's and every re-entry's lease: undefined for the operation's own draw. */
  readonly leaseTime: number | undefined;
  /** Each re-entry's wait. */
  readonly waitTime: number;
  /** How long the outer hold is held before the re-entries (a silence may begin meanwhile: they then wait for room behind each other, the outer release behind them). */
  readonly beforeMs: number;
  /** The releases (all but `keep`) go in this many waves, `waveGapMs` apart, each not waiting for the one before. */
  readonly waves: number;
  readonly waveGapMs: number;
}

export function drawWideBurst(rng: Prng): WideBurst {
  return {
    size: rng.int(REQUEST_SPAN + 1, 3 * REQUEST_SPAN),
    keep: rng.int(1, 10),
    keepForMs: rng.int(0, 500),
    holdMs: rng.int(0, 1_000),
    leaseTime: rng.chance(0.75) ? rng.int(TIMING.longLeaseMin, TIMING.longLeaseMax) : undefined,
    waitTime: rng.int(0, 1_000),
    waves: rng.int(1, 6),
    waveGapMs: rng.int(100, 600),
    beforeMs: rng.int(0, 2_000),
  };
}

/**
 * Runs `burst`: `reenter` that many times at once, then `release` all but `keep` at once (a wide
 * burst: in waves, one every `waveGapMs`, all out together), the rest `keepForMs` after they all
 * settled.
 */
export async function reenterAtOnce<H>(
  burst: Burst | WideBurst,
  reenter: () => Promise<H | undefined>,
  release: (hold: H) => Promise<unknown>,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  const taken: H[] = [];
  for (const hold of await Promise.all(Array.from({ length: burst.size }, () => reenter()))) if (hold !== undefined) taken.push(hold);
  if (burst.holdMs) await sleep(burst.holdMs);
  const going = taken.slice(burst.keep);
  const waves = 'waves' in burst ? burst.waves : 1;
  const perWave = Math.ceil(going.length / waves);
  const released: Promise<unknown>[] = [];
  for (let wave = 0; wave < waves && wave * perWave < going.length; wave += 1) {
    if (wave > 0) await sleep((burst as WideBurst).waveGapMs);
    released.push(...going.slice(wave * perWave, (wave + 1) * perWave).map(release));
  }
  await Promise.all(released);
  await sleep(burst.keepForMs);
  await Promise.all(taken.slice(0, burst.keep).map(release));
}
