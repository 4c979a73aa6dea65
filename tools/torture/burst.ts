// Torture worker: a burst of re-entries. One owner takes many holds of its lock at once, lets most
// of them go at once and keeps the rest a while, so a swallow or a reset that lands in it makes the
// client resend many calls of one owner at once. Each must count once: a re-entry counted twice
// keeps the lock after the owner's last release (`stuck`); a release applied twice frees the lock
// under holds still believed (`exclusion`, `told-late`).
import type { Prng } from './schedule.js';

/** One burst: how many re-entries at once, how many of them are kept after the rest went, how long. */
export interface Burst {
  readonly size: number;
  readonly keep: number;
  readonly keepForMs: number;
}

/** A burst's sizes, drawn with the operation's other choices. */
export function drawBurst(rng: Prng): Burst {
  return { size: rng.int(20, 150), keep: rng.int(1, 15), keepForMs: rng.int(0, 300) };
}

/** Runs `burst`: `reenter` that many times at once, then `release` all but `keep` at once, the rest `keepForMs` later. */
export async function reenterAtOnce<H>(
  burst: Burst,
  reenter: () => Promise<H | undefined>,
  release: (hold: H) => Promise<void>,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  const taken: H[] = [];
  for (const hold of await Promise.all(Array.from({ length: burst.size }, () => reenter()))) if (hold !== undefined) taken.push(hold);
  await Promise.all(taken.slice(burst.keep).map(release));
  await sleep(burst.keepForMs);
  await Promise.all(taken.slice(0, burst.keep).map(release));
}
