import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisPortOf } from '../../lib/redis/detect.js';
import { absoluteNow, SharedSlots, SlotState } from '../../lib/renewal-thread/shared-slots.js';
import type { FromThread, ToThread } from '../../lib/renewal-thread/protocol.js';
import { ThreadRenewer } from '../../lib/renewal-thread/thread-renewer.js';
import { RenewalScripts } from '../../lib/scripts/renewal-scripts.js';
import { ScriptRunner } from '../../lib/scripts/script-runner.js';
import { useLockFixture } from '../helpers/fixtures.js';

/*
 * A model-based search of the renewal thread's slots (lib/renewal-thread/): the main side's
 * protocol (what RenewalThread does: a slot made Active before its `hold` message is posted, made
 * Ended before its `end` message, given out again only once the thread said `freed` for that
 * generation, a let-go or lost slot ended on the main side's news) against the real ThreadRenewer
 * and SharedSlots, renewing holds in a real redis-server. Messages each way wait in queues until a
 * step delivers the oldest (a blocked main loop reads the thread's late; the thread reads the
 * main side's late), rounds run when a step says, renewals are answered when a step settles them,
 * the main side's heartbeat goes stale (a stall), and a hold's key disappears (expired, taken by
 * forceUnlock). The thread's connection also carries the model's own writes, so Redis sees them in
 * the order they were made.
 *
 * The checks, after every step:
 *   ended     a hold the main side ended is never renewed again (no renewal sent after its end:
 *             its key keeps the short TTL the end set)
 *   states    a live hold's slot is Active, Gone, Taken or Stalled; an ended one's Ended or Free
 *             (Free only after `freed`); a slot given out is not on the free list, and no two live
 *             holds share one
 *   stalled   a slot is Stalled only after a round that saw a stale heartbeat
 *   renews    after a round and its answers, every live hold the thread knows of, whose key is
 *             there, with a fresh heartbeat, was renewed (its TTL is the lease's, its renewal time set)
 *
 * RLOCK_MODEL_SEED replays a search (the seed is printed); RLOCK_MODEL_RUNS sets the number of runs.
 */

const LEASE_MS = 60_000;
/** What a fresh hold and an ended one are given: a renewal would lift it to LEASE_MS. */
const SHORT_MS = 5_000;
const MAX_STALL_MS = 10_000;
const HOLDS = 4;
const SLOTS_USED = 3;

type Step =
  | { readonly kind: 'track'; readonly hold: number }
  | { readonly kind: 'untrack'; readonly hold: number }
  | { readonly kind: 'to-thread' }
  | { readonly kind: 'to-main' }
  | { readonly kind: 'round' }
  | { readonly kind: 'settle' }
  | { readonly kind: 'gone'; readonly hold: number }
  | { readonly kind: 'stall' }
  | { readonly kind: 'beat' }
  | { readonly kind: 'verify' };

const holdArb = fc.integer({ min: 0, max: HOLDS - 1 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: holdArb.map((hold) => ({ kind: 'track', hold }) as const) },
  { weight: 2, arbitrary: holdArb.map((hold) => ({ kind: 'untrack', hold }) as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'to-thread' } as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'to-main' } as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'round' } as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'settle' } as const) },
  { weight: 1, arbitrary: holdArb.map((hold) => ({ kind: 'gone', hold }) as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stall' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'beat' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'verify' } as const) },
);

/** A hold as the main side sees it. */
interface Live {
  readonly slot: number;
  readonly generation: number;
  /** The thread got its `hold` message. */
  known: boolean;
  /** Its key was deleted (the thread will find it gone). */
  gone: boolean;
  /** A round ran while it was live and the heartbeat stale: the thread may have let it go. */
  mayStall: boolean;
}

const envNumber = (name: string): number | undefined => (process.env[name] === undefined ? undefined : Number(process.env[name]));
const SEED = envNumber('RLOCK_MODEL_SEED') ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const RUNS = envNumber('RLOCK_MODEL_RUNS') ?? 40;

describe('renewal thread slots (model)', () => {
  const f = useLockFixture();

  it('never renews an ended hold, keeps the slot states legal, and renews every live hold it knows of', async () => {
    let runs = 0;
    let stepsRun = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 40 }), async (steps) => {
        runs += 1;
        const run = new World(f.redis(), `${f.prefix}:r${runs}`);
        try {
          for (const [i, step] of steps.entries()) {
            const where = `after step ${i + 1} (${JSON.stringify(step)}) of ${JSON.stringify(steps)}`;
            if (step.kind === 'verify') await run.checkRenews(where);
            else await run.apply(step);
            stepsRun += 1;
            await run.check(where);
          }
        } finally {
          run.close();
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    console.log(`renewal-slots model: passed (seed=${SEED}); runs=${runs}, steps=${stepsRun}`);
  }, 120_000);
});

class World {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #slots = new SharedSlots();
  readonly #renewer: ThreadRenewer;
  readonly #toThread: ToThread[] = [];
  readonly #toMain: FromThread[] = [];
  readonly #free: number[] = Array.from({ length: SLOTS_USED }, (_, i) => SLOTS_USED - 1 - i);
  readonly #live = new Map<number, Live>();
  /** Holds ended by the main side and not tracked again since. */
  readonly #ended = new Set<number>();
  /** Slots ended and not yet freed, by slot: their generation. */
  readonly #ending = new Map<number, number>();
  #stale = false;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#slots.beat();
    const data = { buffer: this.#slots.buffer, connect: '', leaseMs: LEASE_MS, maxStallMs: MAX_STALL_MS, keyPrefix: '', db: 0, cluster: false, syncReplicas: undefined };
    this.#renewer = new ThreadRenewer(data, new RenewalScripts(new ScriptRunner(redisPortOf(redis, 'the model'))), (message) => this.#toMain.push(message));
  }

  #key(hold: number): string {
    return `{${this.#prefix}:h${hold}}`;
  }

  async apply(step: Step): Promise<void> {
    switch (step.kind) {
      case 'track': {
        if (this.#live.has(step.hold)) return;
        const slot = this.#free.pop();
        if (slot === undefined) return;
        // A fresh hold in Redis, written on the thread's connection (ordered with its renewals).
        void this.#redis.multi().hset(this.#key(step.hold), 'owner', '1').pexpire(this.#key(step.hold), SHORT_MS).exec();
        const generation = this.#slots.assign(slot);
        this.#live.set(step.hold, { slot, generation, known: false, gone: false, mayStall: false });
        this.#ended.delete(step.hold);
        this.#toThread.push({ type: 'hold', slot, generation, script: 'lock', keys: [this.#key(step.hold)], holder: 'owner' });
        return;
      }
      case 'untrack':
        this.#end(step.hold);
        return;
      case 'to-thread': {
        const message = this.#toThread.shift();
        if (!message) return;
        if (message.type === 'hold') for (const live of this.#live.values()) if (live.slot === message.slot && live.generation === message.generation) live.known = true;
        this.#renewer.receive(message);
        return;
      }
      case 'to-main': {
        const message = this.#toMain.shift();
        if (!message) return;
        if (message.type === 'freed') {
          if (this.#slots.generation(message.slot) === message.generation && this.#slots.state(message.slot) === SlotState.Ended) {
            this.#slots.free(message.slot);
            this.#free.push(message.slot);
            this.#ending.delete(message.slot);
          }
        } else if (message.type === 'changed') {
          // RenewalThread.sync: a slot let go or lost ends the hold on the main side.
          for (const [hold, live] of this.#live) {
            const state = this.#slots.state(live.slot);
            if (message.slots.includes(live.slot) && (state === SlotState.Gone || state === SlotState.Taken || state === SlotState.Stalled)) this.#end(hold);
          }
        }
        return;
      }
      case 'round':
        if (this.#stale) for (const live of this.#live.values()) live.mayStall = true;
        this.#renewer.start();
        return;
      case 'settle':
        // Every reply sent so far has come (one connection, in order), and its handlers ran.
        await this.#redis.ping();
        await new Promise((resolve) => setImmediate(resolve));
        return;
      case 'gone': {
        const live = this.#live.get(step.hold);
        if (!live) return;
        live.gone = true;
        void this.#redis.del(this.#key(step.hold));
        return;
      }
      case 'stall':
        this.#stale = true;
        this.#slots.beat(absoluteNow() - MAX_STALL_MS - 1_000);
        return;
      case 'beat':
        this.#stale = false;
        this.#slots.beat();
        return;
      case 'verify':
        return;
    }
  }

  /** RenewalThread.untrack: Ended first, then the message; the key is given a short TTL after whatever was sent before. */
  #end(hold: number): void {
    const live = this.#live.get(hold);
    if (!live) return;
    this.#slots.end(live.slot);
    this.#live.delete(hold);
    this.#ended.add(hold);
    this.#ending.set(live.slot, live.generation);
    this.#toThread.push({ type: 'end', slot: live.slot, generation: live.generation });
    void this.#redis.pexpire(this.#key(hold), SHORT_MS);
  }

  async check(where: string): Promise<void> {
    await this.#redis.ping();
    await new Promise((resolve) => setImmediate(resolve));
    // ended: no renewal lifted an ended hold's TTL back to the lease.
    for (const hold of this.#ended) {
      const ttl = await this.#redis.pttl(this.#key(hold));
      expect(ttl, `ended: hold ${hold} renewed after its end, ${where}`).toBeLessThanOrEqual(SHORT_MS);
    }
    // states.
    const liveSlots = new Set<number>();
    for (const [hold, live] of this.#live) {
      const state = this.#slots.state(live.slot);
      expect([SlotState.Active, SlotState.Gone, SlotState.Taken, SlotState.Stalled], `states: hold ${hold}'s slot ${live.slot}, ${where}`).toContain(state);
      expect(liveSlots.has(live.slot), `states: slot ${live.slot} shared, ${where}`).toBe(false);
      expect(this.#free, `states: slot ${live.slot} both given out and free, ${where}`).not.toContain(live.slot);
      liveSlots.add(live.slot);
      if (state === SlotState.Stalled) expect(live.mayStall, `stalled: slot ${live.slot} Stalled with no stale round, ${where}`).toBe(true);
    }
    for (const slot of this.#ending.keys()) expect(this.#slots.state(slot), `states: ended slot ${slot}, ${where}`).toBe(SlotState.Ended);
    for (const slot of this.#free) expect(this.#slots.state(slot), `states: free slot ${slot}, ${where}`).toBe(SlotState.Free);
  }

  /** renews: a round, its answers, then every live hold the thread knows of (key there, fresh beat) is renewed. */
  async checkRenews(where: string): Promise<void> {
    if (this.#stale) return;
    this.#renewer.start();
    await this.#redis.ping();
    await new Promise((resolve) => setImmediate(resolve));
    for (const [hold, live] of this.#live) {
      if (!live.known || live.gone || this.#slots.state(live.slot) !== SlotState.Active) continue;
      expect(await this.#redis.pttl(this.#key(hold)), `renews: hold ${hold}, ${where}`).toBeGreaterThan(SHORT_MS);
      expect(this.#slots.renewedAt(live.slot), `renews: hold ${hold}'s renewal time, ${where}`).toBeGreaterThan(0);
    }
  }

  close(): void {
    this.#renewer.close();
  }
}
