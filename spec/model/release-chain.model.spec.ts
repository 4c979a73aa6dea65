import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { LockNotHeldError, type Lease, type LockClient, type RLock } from '../../lib/index.js';
import releaseScript from '../../lib/scripts/release-2.lua';
import { useFaultRig } from '../helpers/fault-rig.js';

/*
 * A model-based search of releases retried in the background (lib/holding/release-hold.ts),
 * against a real redis-server: one owner holds a lock several times (one Lease per acquisition)
 * and releases its Leases in random interleavings, the replies of its release calls parked by a
 * wrapper of the connection's send path until a step delivers or loses them (Redis ran the call
 * either way), some release calls refused before they reach Redis, `release()` again on a Lease
 * whose release failed, re-entries while releases are retried, time passing for the background
 * retries (50 ms, then doubling).
 *
 * The checks, after every step:
 *
 *   count         Redis' hold count of the owner lies between the Leases the client holds
 *                 (acquired, never released) and those plus the ones in doubt (acquiring,
 *                 releasing, or whose release failed and may have got through in the background)
 *   lost          no Lease the client holds is aborted as lost
 *   not-held      no release of a held Lease is refused as not held
 *   retry-answer  a release again, after one that failed, is not refused as not held (a try that
 *                 got through is answered as it was)
 *   acquire       an acquisition (a re-entry) does not fail
 *
 * At the end every doubt is resolved (each failed release tried again until it answers): the
 * count equals the Leases held exactly; then all are released, the count is 0 and another owner
 * gets the lock at once.
 *
 * RLOCK_MODEL_SEED replays a search (fast-check prints the seed on failure; real time is part of
 * a run, so a replay is close, not exact); with RLOCK_MODEL_PATH (its `path`) and
 * RLOCK_MODEL_REPLAY (the commands' `replayPath`) it replays the shrunk run at once.
 * RLOCK_MODEL_RUNS sets the number of runs,
 * RLOCK_MODEL_SKIP (comma-separated names above) turns checks off, RLOCK_MODEL_VERBOSE prints
 * every run's steps.
 */

// ---------------------------------------------------------------------------------------------
// The adapter: how the steps reach the library (its public API) and the connection.

/** A release call's reply, held back until a step delivers or loses it. */
interface Parked {
  readonly n: number;
  /** The release's request argument (`<seq>/<gap>`). */
  readonly request: string;
  fate: 'parked' | 'delivered' | 'lost';
  deliver(): void;
  lose(): void;
}

interface Wire {
  readonly parked: Parked[];
  /** Release calls to refuse before they reach Redis (as a connection that cannot write). */
  refuse: number;
}

/**
 * Wraps `redis`'s send path: every release call (release-2.lua, EVALSHA or EVAL) goes to Redis,
 * but its reply waits in `parked`; a refused one is rejected without being sent.
 */
function wrapSends(redis: Redis, log: string[]): Wire {
  const sha = createHash('sha1').update(releaseScript.lua).digest('hex');
  const wire: Wire = { parked: [], refuse: 0 };
  type Send = Redis['sendCommand'];
  const send: Send = redis.sendCommand.bind(redis);
  const wrapped = (...[command, stream]: Parameters<Send>): ReturnType<Send> => {
    const args = command.args;
    if (!(command.name === 'evalsha' && args[0] === sha) && !(command.name === 'eval' && args[0] === releaseScript.lua)) return send(command, stream);
    const request = String(args[6]);
    if (wire.refuse > 0) {
      wire.refuse -= 1;
      log.push(`  release ${request} refused`);
      return Promise.reject(new Error('refused before it was sent'));
    }
    const reply = send(command, stream) as Promise<unknown>;
    const n = wire.parked.length + 1;
    log.push(`  release ${request} sent (reply #${n} parked)`);
    return new Promise((resolve, reject) => {
      const lost = (): void => reject(new Error('connection lost (the reply of a call Redis ran)'));
      const parked: Parked = {
        n,
        request,
        fate: 'parked',
        deliver: () => {
          parked.fate = 'delivered';
          log.push(`  reply #${n} (${request}) delivered`);
          reply.then(resolve, reject);
        },
        lose: () => {
          parked.fate = 'lost';
          log.push(`  reply #${n} (${request}) lost`);
          reply.then(lost, lost);
        },
      };
      wire.parked.push(parked);
    });
  };
  redis.sendCommand = wrapped;
  return wire;
}

// ---------------------------------------------------------------------------------------------
// The model: the Leases, and what the client believes of each.

interface LeaseState {
  readonly n: number;
  lease: Lease | undefined;
  /** acquiring → held → releasing → released, or releasing → failed → releasing … */
  state: 'acquiring' | 'held' | 'releasing' | 'failed' | 'released';
  releases: number;
}

class Violation extends Error {}

interface Run {
  readonly lock: RLock;
  readonly client: LockClient;
  readonly wire: Wire;
  readonly owner: () => string | undefined;
  readonly admin: Redis;
  readonly key: string;
  /** Every step, with what the wire saw during it. */
  readonly story: string[];
}

class Model {
  readonly leases: LeaseState[] = [];
  /** Operations under way (acquisitions, releases): awaited at the end. */
  readonly pending: Promise<unknown>[] = [];
  /** The first check that failed in a callback: thrown at the end of its step. */
  failure: string | undefined = undefined;

  constructor(
    readonly wire: Wire,
    readonly skip: ReadonlySet<string>,
  ) {}

  /** Records a failed check (unless skipped): `name` is one of the checks listed at the top. */
  note(ok: boolean, name: string, message: () => string): void {
    if (!ok && !this.skip.has(name)) this.failure ??= `${name}: ${message()}`;
  }

  count(...states: LeaseState['state'][]): number {
    return this.leases.filter((lease) => states.includes(lease.state)).length;
  }
}

async function holdCount(run: Run): Promise<number> {
  const owner = run.owner();
  if (owner === undefined) return 0;
  return Number((await run.admin.hget(run.key, owner)) ?? 0);
}

function fail(run: Run, message: string): never {
  throw new Violation(`${message}\n  steps:\n    ${run.story.slice(-60).join('\n    ')}`);
}

/** Throws the failure a callback noted, with Redis' count. */
async function failed(m: Model, run: Run): Promise<void> {
  if (m.failure !== undefined) fail(run, `${m.failure}\n  (Redis counts ${await holdCount(run)} holds of the owner, the client holds ${m.count('held')} Leases)`);
}

/** Fails with `name` unless that check is skipped. */
function checkThat(m: Model, run: Run, ok: boolean, name: string, message: () => string): void {
  if (!ok && !m.skip.has(name)) fail(run, `${name}: ${message()}`);
}

/** Lets continuations and a round trip or two happen. */
async function settle(run: Run): Promise<void> {
  for (let i = 0; i < 3; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
  await run.admin.ping();
  for (let i = 0; i < 3; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** After every step: Redis' count between the Leases held and those plus the ones in doubt. */
async function check(m: Model, run: Run): Promise<void> {
  await failed(m, run);
  const held = m.count('held');
  const doubt = m.count('acquiring', 'releasing', 'failed');
  const count = await holdCount(run);
  checkThat(m, run, count >= held, 'count', () => `Redis counts ${count} holds of the owner, the client holds ${held} Leases`);
  checkThat(m, run, count <= held + doubt, 'count', () => `Redis counts ${count} holds of the owner: more than the ${held} held and ${doubt} in doubt`);
  for (const lease of m.leases) {
    if (lease.state !== 'held') continue;
    checkThat(m, run, !lease.lease!.signal.aborted, 'lost', () => `Lease ${lease.n} is aborted: ${String(lease.lease!.signal.reason)}`);
  }
}

function startRelease(m: Model, run: Run, lease: LeaseState): void {
  // A release again after one that failed: that one may have got through in the background.
  const again = lease.state === 'failed';
  lease.state = 'releasing';
  lease.releases += 1;
  const attempt = lease.releases;
  m.pending.push(
    lease.lease!.release().then(
      () => {
        lease.state = 'released';
        run.story.push(`  Lease ${lease.n}: release ${attempt} resolved`);
      },
      (error: unknown) => {
        run.story.push(`  Lease ${lease.n}: release ${attempt} rejected: ${(error as Error).message}`);
        if (!(error instanceof LockNotHeldError)) {
          lease.state = 'failed';
          return;
        }
        // The client says the Lease holds nothing (any more): it believes it gone.
        lease.state = 'released';
        m.note(again, 'not-held', () => `Lease ${lease.n} was held, and its release is refused as not held (${error.message})`);
        m.note(!again, 'retry-answer', () => `Lease ${lease.n}'s release again, after one that failed and may have got through, is refused as not held (${error.message})`);
      },
    ),
  );
}

type Command = fc.AsyncCommand<Model, Run, false>;

abstract class Step implements Command {
  abstract check(m: Readonly<Model>): boolean;
  abstract toString(): string;
  protected abstract act(m: Model, run: Run): Promise<void> | void;
  async run(m: Model, run: Run): Promise<void> {
    run.story.push(this.toString());
    await this.act(m, run);
    await settle(run);
    await check(m, run);
  }
}

const MAX_LEASES = 5;

/** The owner takes the lock once more (a re-entry; it waits while a last release is retried). */
class Acquire extends Step {
  check(m: Readonly<Model>): boolean {
    return m.count('acquiring', 'held') < MAX_LEASES;
  }
  toString(): string {
    return 'acquire';
  }
  act(m: Model, run: Run): void {
    const lease: LeaseState = { n: m.leases.length + 1, lease: undefined, state: 'acquiring', releases: 0 };
    m.leases.push(lease);
    m.pending.push(
      run.lock.acquire().then(
        (got) => {
          lease.lease = got;
          lease.state = 'held';
          run.story.push(`  Lease ${lease.n} acquired`);
        },
        (error: unknown) => {
          m.note(false, 'acquire', () => `acquisition ${lease.n} failed: ${(error as Error).message}`);
        },
      ),
    );
  }
}

/** `release()` on a held Lease, or again on one whose release failed. */
class Release extends Step {
  constructor(readonly pick: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.count('held', 'failed') > 0;
  }
  toString(): string {
    return `release Lease #${this.pick}`;
  }
  act(m: Model, run: Run): void {
    const open = m.leases.filter((lease) => lease.state === 'held' || lease.state === 'failed');
    const lease = open[this.pick % open.length]!;
    run.story.push(`  is Lease ${lease.n}${lease.state === 'failed' ? ', again' : ''}`);
    startRelease(m, run, lease);
  }
}

/** The reply of a release call Redis ran arrives, or is lost with the connection. */
class Reply extends Step {
  constructor(
    readonly pick: number,
    readonly fate: 'deliver' | 'lose',
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wire.parked.some((reply) => reply.fate === 'parked');
  }
  toString(): string {
    return `${this.fate} reply #${this.pick}`;
  }
  act(m: Model): void {
    const parked = m.wire.parked.filter((reply) => reply.fate === 'parked');
    parked[this.pick % parked.length]![this.fate]();
  }
}

/** Redis refuses the next release call (it never runs). */
class Refuse extends Step {
  check(): boolean {
    return true;
  }
  toString(): string {
    return 'refuse the next release call';
  }
  act(_m: Model, run: Run): void {
    run.wire.refuse += 1;
  }
}

/** Time passes: background retries go out. */
class Pass extends Step {
  constructor(readonly ms: number) {
    super();
  }
  check(): boolean {
    return true;
  }
  toString(): string {
    return `${this.ms} ms pass`;
  }
  async act(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.ms));
  }
}

const pick = fc.nat({ max: 7 });
const release = pick.map((p) => new Release(p));
const reply = fc.tuple(pick, fc.constantFrom('deliver' as const, 'lose' as const)).map(([p, f]) => new Reply(p, f));
const commands = fc.commands<Model, Run, false>(
  [
    // Listed twice or thrice: weights.
    fc.constant(new Acquire()),
    fc.constant(new Acquire()),
    release,
    release,
    release,
    reply,
    reply,
    reply,
    fc.constant(new Refuse()),
    fc.constantFrom(20, 60, 150).map((ms) => new Pass(ms)),
  ],
  { maxCommands: 30, size: 'medium', ...(process.env.RLOCK_MODEL_REPLAY !== undefined ? { replayPath: process.env.RLOCK_MODEL_REPLAY } : {}) },
);

/** Every doubt resolved: replies delivered, failed releases tried again until they answer; then all released. */
async function drain(m: Model, run: Run): Promise<void> {
  run.story.push('drain: no more refusals, every reply delivered, every failed release tried again');
  run.wire.refuse = 0;
  const deadline = performance.now() + 10_000;
  while (m.count('acquiring', 'releasing', 'failed') > 0) {
    await failed(m, run);
    if (performance.now() > deadline) fail(run, `drain: it did not end: ${m.count('acquiring')} acquiring, ${m.count('releasing')} releasing, ${m.count('failed')} failed`);
    for (const reply of run.wire.parked) if (reply.fate === 'parked') reply.deliver();
    for (const lease of m.leases) if (lease.state === 'failed') startRelease(m, run, lease);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Background retries of releases answered meanwhile (their replies too).
  for (let i = 0; i < 3; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const reply of run.wire.parked) if (reply.fate === 'parked') reply.deliver();
  }
  await settle(run);
  await failed(m, run);
  const held = m.count('held');
  const count = await holdCount(run);
  checkThat(m, run, count === held, 'count', () => `every doubt resolved: Redis counts ${count} holds of the owner, the client holds ${held} Leases`);
  run.story.push('drain: every Lease released');
  for (const lease of m.leases) if (lease.state === 'held') startRelease(m, run, lease);
  while (m.count('releasing') > 0) {
    for (const reply of run.wire.parked) if (reply.fate === 'parked') reply.deliver();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await settle(run);
  await failed(m, run);
  const left = await holdCount(run);
  checkThat(m, run, left === 0, 'count', () => `every Lease released: Redis still counts ${left} holds of the owner`);
}

const env = process.env;
const runs = Number(env.RLOCK_MODEL_RUNS ?? 30);

describe('releases retried in the background, model-based (real Redis)', () => {
  const rig = useFaultRig();

  it("keeps Redis' hold count on the Leases the client believes live", async () => {
    let runNumber = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        runNumber += 1;
        const redis = rig.connect('direct');
        await redis.ping();
        const story: string[] = [];
        const wire = wrapSends(redis, story);
        const client = rig.client(redis);
        const name = `chain-${runNumber}`;
        const lock = client.getLock(name);
        let owner: string | undefined;
        const run: Run = { lock, client, wire, owner: () => owner, admin: rig.admin, key: rig.key(name), story };
        const m = new Model(wire, new Set((env.RLOCK_MODEL_SKIP ?? '').split(',').filter(Boolean)));
        try {
          await client.runInContext(async () => {
            // The owner's first hold, so that every run starts holding.
            const first = await lock.acquire();
            owner = first.owner;
            m.leases.push({ n: 1, lease: first, state: 'held', releases: 0 });
            run.story.push('acquire', '  Lease 1 acquired');
            await fc.asyncModelRun(() => ({ model: m, real: run }), cmds);
            await drain(m, run);
            // Another owner gets the lock at once.
            const rival = await client.runInContext(() => lock.tryLock(0, 10_000));
            checkThat(m, run, rival, 'count', () => 'every Lease released, yet another owner cannot take the lock');
            if (rival) await client.runInContext(() => lock.forceUnlock());
          });
          if (env.RLOCK_MODEL_VERBOSE !== undefined) console.log(`run ${runNumber}:\n  ${run.story.join('\n  ')}`);
        } finally {
          for (const reply of wire.parked) if (reply.fate === 'parked') reply.deliver();
          await Promise.allSettled(m.pending);
          await client.close();
        }
      }),
      {
        numRuns: runs,
        ...(env.RLOCK_MODEL_SEED !== undefined ? { seed: Number(env.RLOCK_MODEL_SEED) } : {}),
        ...(env.RLOCK_MODEL_PATH !== undefined ? { path: env.RLOCK_MODEL_PATH } : {}),
      },
    );
  }, 300_000);
});
