// A torture worker process: a few LockClients (each behind its own fault proxies), several
// operation loops per client taking locks of the chosen kinds, and every outcome reported to the
// parent over IPC with a timestamp. Started by the parent (tools/torture/main.ts) with fork().
import {
  LockAcquireTimeoutError,
  LockClient,
  MultiLock,
  RedLock,
  type Lease,
  type LeaseHandle,
  type LockWaitOptions,
  type RLock,
} from '../../lib/index.js';
import type { Kind } from './args.js';
import { openConnection, type TortureConnection } from './connections.js';
import { semaphoreTarget } from './semaphore-kind.js';
import { electionOperation, observeElections, type ElectionWorker } from './election.js';
import { now, type ClientSetup, type HoldMode, type ParentMessage, type WorkerConfig, type WorkerEvent } from './events.js';
import { Prng, TIMING } from './schedule.js';
import { moveHold, reportLoss } from './hand-off.js';
import { drawBurst, drawWideBurst, reenterAtOnce, type WideBurst } from './burst.js';
import { drawRetryPlan, Ledger, type Acquired, type RetryPlan } from './ledger.js';
import { drawStall, Stalls, type StallDraw } from './stall.js';
import { useRenewalWorkerScript } from '../../lib/renewal-thread/worker-script.js';

const config = JSON.parse(process.argv[2] ?? '') as WorkerConfig;
const send = (event: WorkerEvent): void => {
  stalls.forget(event);
  if (process.connected) process.send!(event);
};
// The renewal threads run the bundle of their program (renewal.ts): a thread has no TypeScript loader.
useRenewalWorkerScript(new URL(config.renewal.worker));
const stalls = new Stalls(send, { worker: config.worker, incarnation: config.incarnation, client: config.client, connect: config.renewal.connect });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let stopping = false;
let errors = 0;
let counter = 0;
const nextId = (): string => `${config.worker}.${config.incarnation}.${(counter += 1)}`;

const connections: TortureConnection[] = [];
const connect = (url: string, setup: ClientSetup): TortureConnection['connection'] => {
  const opened = openConnection(config.client, url, setup);
  connections.push(opened);
  return opened.connection;
};
const newClient = (url: string, setup: ClientSetup, c: number, which: string): LockClient => {
  // With ClientSetup.thread: a renewal thread connected through the same proxy (stall.ts).
  const thread = stalls.thread(url, setup, c, which);
  const client = new LockClient(connect(url, setup), {
    keyPrefix: config.keyPrefix,
    watchdogTimeout: TIMING.watchdogTimeout,
    fairLockWaitTimeout: TIMING.fairLockWaitTimeout,
    ...(thread.options ? { renewalThread: thread.options } : {}),
  });
  thread.attach(client);
  client.on('error', () => {
    errors += 1;
  });
  // Losses are reported per hold, through each Lease's signal; the event itself needs no action.
  client.on('lost', () => undefined);
  return client;
};

interface WorkerClient {
  readonly main: LockClient | undefined;
  readonly red: readonly LockClient[];
}
const clients: WorkerClient[] = config.clients.map(({ main, red, setup }, c) => ({
  main: main === undefined ? undefined : newClient(main, setup, c, 'main'),
  red: red.map((url, i) => newClient(url, setup, c, `red${i}`)),
}));

/** The lock an operation takes: how to make it, its names, and how it holds. */
interface Target {
  readonly kind: Kind;
  readonly names: readonly string[];
  readonly mode: HoldMode;
  readonly lock: RLock;
  /** The lock a nested acquisition re-enters (a writer may also read). */
  readonly nested: () => { lock: RLock; mode: HoldMode };
  /** Semaphores: how many permits an acquisition takes. */
  readonly permits?: number;
  /** The LockClients its holds live on (a RedLock's: one per master), whose renewal threads renew them. */
  readonly via: readonly LockClient[];
  /** The worker's client it runs on. */
  readonly client: number;
}

function target(kind: Exclude<Kind, 'election'>, client: WorkerClient, rng: Prng): Target {
  const c = clients.indexOf(client);
  const base = { via: kind === 'redlock' ? client.red : [client.main!], client: c };
  return { ...base, ...lockOf(kind, client, rng) };
}

function lockOf(kind: Exclude<Kind, 'election'>, client: WorkerClient, rng: Prng): Omit<Target, 'via' | 'client'> {
  const main = (): LockClient => client.main!;
  const k = rng.int(0, 1);
  switch (kind) {
    case 'lock':
    case 'fair':
    case 'fenced': {
      const name = `${kind}-${k}`;
      const lock = kind === 'lock' ? main().getLock(name) : kind === 'fair' ? main().getFairLock(name) : main().getFencedLock(name);
      return { kind, names: [name], mode: 'excl', lock, nested: () => ({ lock, mode: 'excl' }) };
    }
    case 'rw': {
      const name = `rw-${k}`;
      const rw = main().getReadWriteLock(name);
      const write = rng.chance(0.4);
      return {
        kind,
        names: [name],
        mode: write ? 'write' : 'read',
        lock: write ? rw.writeLock() : rw.readLock(),
        // A writer re-enters its write lock or also reads; a reader re-enters its read lock.
        nested: () => (write && rng.chance(0.5) ? { lock: rw.writeLock(), mode: 'write' } : { lock: rw.readLock(), mode: 'read' }),
      };
    }
    case 'multi': {
      const all = ['multi-0', 'multi-1', 'multi-2'];
      const left = rng.pick(all);
      const names = rng.chance(0.3) ? all : all.filter((name) => name !== left);
      const multi = new MultiLock(...names.map((name) => main().getLock(name)));
      return { kind, names, mode: 'excl', lock: multi, nested: () => ({ lock: multi, mode: 'excl' }) };
    }
    case 'semaphore': {
      const sem = semaphoreTarget(main(), rng);
      return { kind, names: [sem.name], mode: 'excl', lock: sem.lock, nested: () => ({ lock: sem.lock, mode: 'excl' }), permits: sem.permits };
    }
    case 'redlock': {
      const name = `red-${k}`;
      const red = new RedLock(...client.red.map((c) => c.getLock(name)), { nodeTimeout: 50 });
      return { kind, names: [name], mode: 'excl', lock: red, nested: () => ({ lock: red, mode: 'excl' }) };
    }
  }
}

/** How `client` adopts a handle of `t`'s hold: a RedLock over its masters, or its main client. */
function adopterOf(t: Target, client: WorkerClient | undefined): ((handle: LeaseHandle) => Promise<Lease>) | undefined {
  if (!client) return undefined;
  if (t.kind === 'redlock') {
    const red = new RedLock(...client.red.map((c) => c.getLock(t.names[0]!)), { nodeTimeout: 50 });
    return (handle) => red.adopt(handle);
  }
  const main = client.main;
  return main ? (handle) => main.adopt(handle) : undefined;
}

/** A wait budget, ms: sometimes a single attempt, mostly a bounded wait. */
const drawWait = (rng: Prng): number => (rng.chance(0.15) ? 0 : rng.int(50, 2_500));
/** A lease: watchdog mode (undefined) or fixed. */
const drawLease = (rng: Prng): number | undefined => (rng.chance(0.4) ? undefined : rng.int(TIMING.leaseMin, TIMING.leaseMax));

/** One acquisition, reported: the wait, then the hold and how it ends (lost). */
async function acquire(
  rng: Prng,
  op: string,
  t: Target,
  lock: RLock,
  mode: HoldMode,
  /** For a re-entry: the owner of the hold it re-enters. */
  reentryOf: string | undefined,
  waitTime: number,
  leaseTime: number | undefined,
  maxHoldTime: number | undefined,
  ledger: Ledger,
  /** Some waits are aborted through their signal at a random moment (not a wide burst's re-entries). */
  abortable = true,
): Promise<Acquired | undefined> {
  const reentry = reentryOf !== undefined;
  const controller = new AbortController();
  let budget = waitTime;
  let abortTimer: NodeJS.Timeout | undefined;
  if (rng.chance(0.15) && abortable) {
    const abortAt = rng.int(0, waitTime + 200);
    budget = Math.min(budget, abortAt);
    abortTimer = setTimeout(() => controller.abort(new Error('torture: aborted')), abortAt);
  }
  const options: LockWaitOptions = { waitTime, signal: controller.signal };
  if (leaseTime !== undefined) options.leaseTime = leaseTime;
  if (maxHoldTime !== undefined) options.maxHoldTime = maxHoldTime;
  if (reentryOf !== undefined) send({ type: 'attempt', t: now(), names: t.names, owner: reentryOf, ttl: leaseTime ?? TIMING.watchdogTimeout, waitMs: waitTime });
  const t0 = now();
  const base = { type: 'wait', t0, op, kind: t.kind, names: t.names, budget, permits: t.permits } as const;
  let lease: Lease;
  try {
    lease = await lock.acquire(options);
  } catch (error) {
    clearTimeout(abortTimer);
    const outcome = controller.signal.aborted ? 'aborted' : error instanceof LockAcquireTimeoutError ? 'timeout' : 'error';
    send({ ...base, t: now(), outcome, error: outcome === 'error' ? describe(error) : undefined });
    ledger.acquisitionFailed();
    return undefined;
  }
  const t1 = now();
  clearTimeout(abortTimer);
  const hold = nextId();
  send({ ...base, t: t1, outcome: 'acquired' });
  send({
    type: 'acquired',
    t: t1,
    t0,
    op,
    hold,
    kind: t.kind,
    names: t.names,
    mode,
    owner: lease.owner,
    reentry,
    ttl: leaseTime ?? TIMING.watchdogTimeout,
    watchdog: leaseTime === undefined,
    token: lease.token,
    permits: t.permits,
    capped: maxHoldTime !== undefined,
  });
  reportLoss(send, lease, hold);
  // What a renewal thread renews to the end: a fresh hold in watchdog mode without a cap (a
  // re-entry's owner may have one: it is not counted on) (stall.ts).
  const renewable = !reentry && leaseTime === undefined && maxHoldTime === undefined;
  stalls.track(hold, lease.signal, t.via, t.client, config.clients[t.client]!.setup.acl, renewable);
  const acquired = { lease, hold };
  ledger.acquired(acquired);
  return acquired;
}

function write(t: Target, acquired: Acquired): void {
  const { token } = acquired.lease;
  // A careful holder checks its signal before acting.
  if (t.kind !== 'fenced' || token === undefined || acquired.lease.signal.aborted) return;
  send({ type: 'write', t: now(), hold: acquired.hold, name: t.names[0]!, token });
}

const electionWorker: ElectionWorker = { send, nextId, sleep, describe, stopping: () => stopping };

/** The single-key kinds: bursts, several Leases at once, and the owner-count checks. */
const SINGLE_KEY: readonly Kind[] = ['lock', 'fair', 'fenced', 'rw'];

/** Several Leases of one owner released at once while the owner re-enters (ledger.ts checks the count). */
interface Several {
  /** The leases of the 2–4 holds taken one after another (undefined: watchdog mode). */
  readonly leases: readonly (number | undefined)[];
  readonly holdMs: number;
  /** The re-entry made meanwhile: when (after the releases began), its lease, its wait. */
  readonly reenterAfterMs: number;
  readonly reenterLease: number | undefined;
  readonly waitTime: number;
  readonly keepForMs: number;
}

/** Most of them hold with one long lease (burst.ts) a while, so that a silence may catch their releases. */
function drawSeveral(rng: Prng): Several {
  const long = rng.chance(0.6) ? rng.int(TIMING.longLeaseMin, TIMING.longLeaseMax) : undefined;
  const leases = Array.from({ length: rng.int(2, 4) }, () => drawLease(rng));
  const holdMs = rng.int(0, long === undefined ? 300 : 2_000);
  const reenterLease = drawLease(rng);
  return {
    leases: long === undefined ? leases : leases.map(() => long),
    holdMs,
    reenterAfterMs: rng.int(0, 30),
    reenterLease: long ?? reenterLease,
    waitTime: rng.int(0, 1_000),
    keepForMs: rng.int(0, 300),
  };
}

/**
 * The choices of an operation that come from the actor's second PRNG (so the first one's stay
 * what a seed always gave): its shape among the single-key kinds, the sizes of each shape, how
 * its releases are retried, and a seed for the draws made while it runs. All are drawn every time.
 */
interface Extras {
  readonly shape: 'as-drawn' | 'wide' | 'several';
  readonly wide: WideBurst;
  readonly several: Several;
  readonly retry: RetryPlan;
  readonly seed: number;
}

function drawExtras(rng: Prng): Extras {
  const roll = rng.next();
  return {
    shape: roll < 0.16 ? 'wide' : roll < 0.31 ? 'several' : 'as-drawn',
    wide: drawWideBurst(rng),
    several: drawSeveral(rng),
    retry: drawRetryPlan(rng),
    seed: rng.int(0, 2 ** 32 - 1),
  };
}

const ledgerWorker = { send, describe, sleep };

/** A wide burst (burst.ts): more re-entries at once than the request window lets out, none aborted. */
async function wideBurst(op: string, t: Target, x: WideBurst, rng: Prng, ledger: Ledger): Promise<void> {
  const leaseTime = x.leaseTime ?? drawLease(rng);
  const outer = await acquire(rng, op, t, t.lock, t.mode, undefined, drawWait(rng), leaseTime, undefined, ledger);
  if (!outer) return;
  write(t, outer);
  const owner = outer.lease.owner;
  const reenter = (): Promise<Acquired | undefined> => acquire(rng, op, t, t.lock, t.mode, owner, x.waitTime, leaseTime, undefined, ledger, false);
  await sleep(x.beforeMs);
  await reenterAtOnce(x, reenter, (held) => ledger.release(held), sleep);
  write(t, outer);
  await ledger.release(outer);
}

/** 2–4 Leases of one owner, released at once while the owner re-enters; then the re-entry's. */
async function severalAtOnce(op: string, t: Target, x: Several, rng: Prng, ledger: Ledger): Promise<void> {
  const outer = await acquire(rng, op, t, t.lock, t.mode, undefined, drawWait(rng), x.leases[0], undefined, ledger);
  if (!outer) return;
  const owner = outer.lease.owner;
  const reenter = (leaseTime: number | undefined): Promise<Acquired | undefined> =>
    acquire(rng, op, t, t.lock, t.mode, owner, x.waitTime, leaseTime, undefined, ledger);
  const held = [outer];
  for (const leaseTime of x.leases.slice(1)) {
    const inner = await reenter(leaseTime);
    if (inner) held.push(inner);
  }
  await sleep(x.holdMs);
  write(t, outer);
  const meanwhile = sleep(x.reenterAfterMs).then(() => reenter(x.reenterLease));
  const [, again] = await Promise.all([Promise.all(held.map((h) => ledger.release(h))), meanwhile]);
  if (!again) return;
  await sleep(x.keepForMs);
  write(t, again);
  await ledger.release(again);
}

async function operation(client: WorkerClient, kind: Kind, rng: Prng, extras: Extras, stall: StallDraw): Promise<void> {
  if (kind === 'election') {
    // A leadership is in watchdog mode without a cap: a renewal thread renews it (stall.ts).
    const c = clients.indexOf(client);
    const led = (hold: string, signal: AbortSignal): void => stalls.track(hold, signal, [client.main!], c, config.clients[c]!.setup.acl, true);
    return electionOperation(client.main!, rng, electionWorker, led);
  }
  const t = target(kind, client, rng);
  const op = nextId();
  const leaseTime = drawLease(rng);
  // Mostly short holds (many handovers); some past the lease (the holder's clock must tell it).
  const holdFor = rng.chance(0.7) ? rng.int(0, 200) : rng.int(0, Math.round((leaseTime ?? TIMING.watchdogTimeout * 2) * 1.2));
  // Permits are not re-entered (the draw stays, so the other kinds' choices do not move).
  const nest = rng.chance(0.3) && t.kind !== 'semaphore';
  const nestAt = rng.int(0, holdFor);
  const nestLease = drawLease(rng);
  const nestFor = rng.int(0, 300);
  // Some re-entries of the single-key kinds come as a burst: many calls of one owner at once.
  const burst = nest && SINGLE_KEY.includes(t.kind) && rng.chance(0.15) ? drawBurst(rng) : undefined;
  // A watchdog hold capped by maxHoldTime; a hold handed to another client (a RedLock's: to a
  // RedLock over that client's masters).
  const maxHoldTime = leaseTime === undefined && rng.chance(0.2) ? rng.int(300, 3_000) : undefined;
  const handOff = !nest && rng.chance(0.15);
  const adopter = adopterOf(t, rng.pick(clients));
  const handOffAfter = rng.int(0, 150);
  // Some nested holds are let go of outer first: a Lease releases its own hold, whatever the owner holds since.
  const outerFirst = nest && !burst && rng.chance(0.2);
  const main = (client.main ?? client.red[0])!;
  const c = clients.indexOf(client);
  const ledger = new Ledger(ledgerWorker, c, config.clients[c]!.setup.acl, op, t.kind, t.names, extras.retry);
  const release = (acquired: Acquired): Promise<boolean> => ledger.release(acquired);
  const shape = SINGLE_KEY.includes(t.kind) ? extras.shape : 'as-drawn';
  const body = async (): Promise<void> => {
    if (shape === 'wide') return wideBurst(op, t, extras.wide, new Prng(extras.seed), ledger);
    if (shape === 'several') return severalAtOnce(op, t, extras.several, new Prng(extras.seed), ledger);
    let outer = await acquire(rng, op, t, t.lock, t.mode, undefined, drawWait(rng), leaseTime, maxHoldTime, ledger);
    if (!outer) return;
    write(t, outer);
    if (handOff && adopter) {
      await sleep(handOffAfter);
      const ttl = leaseTime ?? TIMING.watchdogTimeout;
      const lock = t.lock;
      const query = async (): Promise<{ held: boolean; count: number }> => {
        const [held, count] = await Promise.all([lock.isHeldByCurrentOwner(), lock.getHoldCount()]);
        return { held, count };
      };
      const context = { send, nextId, describe, op, kind, names: t.names, mode: t.mode, ttl, watchdog: leaseTime === undefined, query };
      ledger.handedOff();
      outer = await moveHold(context, outer, adopter, rng.int(0, 300));
      if (!outer) return;
      write(t, outer);
      await sleep(holdFor);
    } else if (nest) {
      await sleep(nestAt);
      const nested = t.nested();
      const owner = outer.lease.owner;
      const reenter = (): Promise<Acquired | undefined> =>
        acquire(rng, op, t, nested.lock, nested.mode, owner, rng.int(0, 300), nestLease, undefined, ledger);
      const inner = burst ? undefined : await reenter();
      if (burst) await reenterAtOnce(burst, reenter, release, sleep);
      if (inner && outerFirst) {
        write(t, outer);
        await release(outer);
        await sleep(nestFor);
        write(t, inner);
        await release(inner);
        return;
      }
      if (inner) {
        await sleep(nestFor);
        write(t, inner);
        await release(inner);
      }
      await sleep(Math.max(0, holdFor - nestAt - nestFor));
    } else if (stall.wanted && maxHoldTime === undefined && stalls.mayStall(outer.hold)) {
      // A watchdog-mode hold its client's renewal threads renew: block the event loop a while.
      await sleep(stall.afterMs);
      if (stalls.mayStall(outer.hold)) {
        stalls.stall(outer.hold, t.client, stall.ms);
        // One turn of the loop: the heartbeat and the thread's news first (a careful holder then checks its signal).
        await sleep(0);
      }
    } else {
      await sleep(holdFor);
    }
    write(t, outer);
    await release(outer);
  };
  await main.runInContext(async () => {
    await body();
    ledger.finish();
  });
}

/**
 * One loop of operations, with its own PRNGs: its choices depend on the seed only, not on
 * timing. The second PRNG draws what the first never did (Extras).
 */
async function actor(client: WorkerClient, seed: number, id: string): Promise<void> {
  const rng = new Prng(seed);
  const extra = new Prng((seed ^ 0x68e31da4) >>> 0);
  // A third PRNG for the stalls (stall.ts), drawn every time: the other two stay what a seed gave.
  const stalling = new Prng((seed ^ 0x1b873593) >>> 0);
  while (!stopping) {
    const kind = rng.pick(config.kinds);
    doing.set(id, `${kind} since ${now().toFixed(0)}`);
    await operation(client, kind, rng, drawExtras(extra), drawStall(stalling));
    doing.delete(id);
    await sleep(rng.int(0, 100));
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (cause: ${error.cause.name}: ${error.cause.message})` : '';
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}

/** What each actor (by client.actor) and the shutdown are doing now: told to the parent if stopping takes long. */
const doing = new Map<string, string>();
/** How long after 'stop' the worker tells the parent what it is still doing, ms (the parent kills it at 20 s). */
const STUCK_REPORT_MS = 15_000;
process.on('message', (message: ParentMessage) => {
  if (message.type !== 'stop' || stopping) return;
  stopping = true;
  setTimeout(() => {
    send({ type: 'stuck', t: now(), doing: [...doing].map(([who, what]) => `${who}: ${what}`).join('; ') || 'nothing recorded' });
  }, STUCK_REPORT_MS).unref();
});
// The parent is gone: nothing to report to.
let finished = false;
process.on('disconnect', () => {
  if (!finished) process.exit(2);
});

// Connected (through the proxies) before the first operation: a wait's budget is not spent on start-up.
await Promise.all(connections.map((opened) => opened.ping()));
send({ type: 'ready', t: now() });
const observers = config.kinds.includes('election')
  ? clients.map((client, c) => observeElections(client.main!, `${config.worker}.${config.incarnation}.${c}`, electionWorker))
  : [];
await Promise.all(
  clients.flatMap((client, c) =>
    Array.from({ length: config.actorsPerClient }, (_, a) => actor(client, (config.seed + (c * config.actorsPerClient + a) * 0x9e3779b1) >>> 0, `actor ${c}.${a}`)),
  ),
);
doing.set('shutdown', 'stopping the election observers');
for (const observer of observers) await observer.stop();
for (const [c, client] of clients.entries()) {
  doing.set('shutdown', `closing client ${c}'s LockClient`);
  await client.main?.close();
  for (const [r, red] of client.red.entries()) {
    doing.set('shutdown', `closing client ${c}'s RedLock member ${r}`);
    await red.close();
  }
}
doing.set('shutdown', 'closing the connections and stalls');
for (const opened of connections) opened.close();
stalls.close();
send({ type: 'done', t: now(), errors });
finished = true;
process.disconnect();
