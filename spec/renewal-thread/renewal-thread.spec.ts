import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient, LockLostError, LockRedisError, RedLock, type LockClientOptions, type LockLostInfo } from '../../lib/index.js';
import { useRenewalWorkerScript } from '../../lib/renewal-thread/worker-script.js';
import { childBundle } from '../../tools/spec-children.js';
import { connectStandalone, TEST_CLIENT } from '../helpers/clients.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';
import { ALL_KINDS, take, type Held } from '../holding/kinds.js';

/** The lease of these specs, ms: blocks of a few leases stay short. */
const LEASE_MS = 600;
/** The thread's maxStall in the specs that stall past it, ms. */
const MAX_STALL_MS = 1_000;
/** Slack for timers, process start-up and a loaded machine, ms. */
const MARGIN_MS = 600;

const WORKER = pathToFileURL(childBundle('lib/renewal-thread/worker-main.ts'));

/** Blocks this thread's event loop for `ms` (a long synchronous step). */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: no timer, no I/O callback, no promise of this thread runs meanwhile
  }
}

/** The specs' connect module (spec/helpers/renewal-connect.mjs) for the family under test and `url`. */
function connectModule(url: string, extra: Record<string, string> = {}): URL {
  const query = new URLSearchParams({ family: TEST_CLIENT, url, ...extra });
  return new URL(`../helpers/renewal-connect.mjs?${query.toString()}`, import.meta.url);
}

describe('renewalThread: holds that outlive a blocked event loop', () => {
  const fx = useLockFixture();
  beforeAll(() => useRenewalWorkerScript(WORKER));
  afterAll(() => useRenewalWorkerScript(undefined));

  let threads = 0;
  /** Resolves once the client's thread is connected (its connect module set the ready key): it renews from then on. */
  const threadUp = async (locks: LockClient): Promise<void> => {
    const look = fx.redis();
    await until(async () => (await look.exists(readyKeys.get(locks)!)) === 1, 5_000);
  };
  const readyKeys = new WeakMap<LockClient, string>();
  const threaded = (maxStall = 10_000, extra: Record<string, string> = {}, options: LockClientOptions = {}): { locks: LockClient; lost: LockLostInfo[]; errors: Error[] } => {
    const ready = `${fx.prefix}:thread-up:${(threads += 1)}`;
    const locks = fx.client({ watchdogTimeout: LEASE_MS, renewalThread: { connect: connectModule(fx.url, { ready, ...extra }), maxStall }, ...options });
    const lost: LockLostInfo[] = [];
    const errors: Error[] = [];
    locks.on('lost', (info) => lost.push(info));
    locks.on('error', (error) => errors.push(error as Error));
    readyKeys.set(locks, ready);
    return { locks, lost, errors };
  };
  /**
   * A connection to look at Redis, connected before a block: a command it is given right after the
   * block is written before any timer of this thread runs (a fresh connection would let the
   * holder's clock and its let-go run first).
   */
  const admin = async () => {
    const connection = fx.redis();
    await connection.ping();
    return connection;
  };
  /** Who holds `name` in Redis: a lock's hash (owner ids, hold counts), a semaphore's holders (a renewal moves their expiry only). */
  const holdersOf = async (look: Redis, name: string, permit = false): Promise<unknown> => {
    // A read-write lock's hash keeps its writer's deadline (`wuntil`), which a renewal moves.
    if (!permit) return Object.fromEntries(Object.entries(await look.hgetall(`{${fx.prefix}:${name}}`)).filter(([field]) => !field.endsWith('until')));
    const key = `{${fx.prefix}:${name}}:semaphore`;
    const type = await look.type(key);
    return type === 'zset' ? look.zrange(key, 0, -1) : type === 'hash' ? look.hkeys(key) : type;
  };

  it('a hold of every kind, and a leader, whose event loop is blocked for 3 leases are kept throughout and carry on without `lost`', async () => {
    const { locks, lost } = threaded();
    const held: Held[] = [];
    for (const kind of ALL_KINDS) held.push((await take(locks, kind, `kept-${kind}`))!);
    const leader = await locks.getElection('kept-election').campaign();
    const look = await admin();
    const before = await Promise.all(ALL_KINDS.map((kind) => holdersOf(look, `kept-${kind}`, kind === 'permit')));
    for (const holders of before) expect(Object.keys(holders as object).length).toBeGreaterThan(0);
    await threadUp(locks);
    block(3 * LEASE_MS);
    // Nothing of this thread ran during the block: a hold is still there only if the thread
    // renewed it all along (a renewal never re-creates a key that expired).
    expect(await Promise.all(ALL_KINDS.map((kind) => holdersOf(look, `kept-${kind}`, kind === 'permit')))).toEqual(before);
    expect((await locks.getElection('kept-election').leader())?.epoch).toBe(leader.epoch);
    await sleep(50);
    expect(lost).toEqual([]);
    expect([...held, leader].map((hold) => hold.signal.aborted)).toEqual(Array(held.length + 1).fill(false));
    for (const hold of held) await hold.release();
    await leader.resign();
    // Only the counters that outlive their locks by design (fencing token, election epoch) remain,
    // and the key the spec's connect module set.
    expect((await fx.keys()).filter((key) => !/:(token|election:epoch)$|:thread-up:/.test(key))).toEqual([]);
  });

  it('a hold taken just before a block (the thread already up) is renewed through it', async () => {
    const { locks, lost } = threaded();
    await threadUp(locks);
    const look = await admin();
    const lease = await locks.getLock('late').acquire();
    // No await between the acquisition and the block: the thread learns of the hold meanwhile.
    block(3 * LEASE_MS);
    expect(await look.exists(`{${fx.prefix}:late}`)).toBe(1);
    await sleep(50);
    expect(lost).toEqual([]);
    expect(lease.signal.aborted).toBe(false);
    await lease.release();
  });

  it('without the thread, the same block loses the hold (the spec can tell)', async () => {
    const locks = fx.client({ watchdogTimeout: LEASE_MS });
    const lost: LockLostInfo[] = [];
    locks.on('lost', (info) => lost.push(info));
    const lease = await locks.getLock('unkept').acquire();
    const look = await admin();
    block(3 * LEASE_MS);
    expect(await look.exists(`{${fx.prefix}:unkept}`)).toBe(0);
    await until(() => lost.length > 0);
    expect(lease.signal.aborted).toBe(true);
  });

  it('blocked past maxStall: the hold goes, and on resuming the first query sees `lost` (stalled) and an aborted Lease', async () => {
    const { locks, lost } = threaded(MAX_STALL_MS);
    const lock = locks.getLock('stalled');
    const lease = await lock.acquire();
    const look = await admin();
    await threadUp(locks);
    block(MAX_STALL_MS + LEASE_MS + MARGIN_MS);
    // Gone in Redis (free for anyone) while this thread was still blocked.
    expect(await look.exists(`{${fx.prefix}:stalled}`)).toBe(0);
    expect(await lock.isHeldByCurrentOwner()).toBe(false);
    expect(lost.map((info) => info.reason)).toEqual(['stalled']);
    expect(lease.signal.aborted).toBe(true);
    expect((lease.signal.reason as LockLostError).reason).toBe('stalled');
    // Taken afresh, as after any lost hold.
    expect(await lock.tryLock(0)).toBe(true);
    await lock.unlock();
  });

  it('maxHoldTime still caps a hold through a block: the thread stops renewing at it, and the resumed holder is told', async () => {
    const { locks, lost } = threaded();
    const lease = await locks.getLock('capped').acquire({ maxHoldTime: LEASE_MS });
    const look = await admin();
    await threadUp(locks);
    block(3 * LEASE_MS);
    // Not renewed past its cap: gone within a lease after it, while this thread was still blocked.
    expect(await look.exists(`{${fx.prefix}:capped}`)).toBe(0);
    await until(() => lost.length > 0);
    // Told once, by whichever timer runs first after the block: the holder's clock or the cap's.
    expect(lost).toHaveLength(1);
    expect(['expired', 'max-hold-time']).toContain(lost[0]!.reason);
    expect(lease.signal.aborted).toBe(true);
  });

  it('a thread that dies gives its holds back to the main thread, which renews them, and says so (`error`)', async () => {
    const { locks, lost, errors } = threaded(10_000, { exitAfter: String(LEASE_MS) });
    const lease = await locks.getLock('fallback').acquire();
    await until(() => errors.length > 0, 3 * LEASE_MS);
    expect(errors[0]).toBeInstanceOf(LockRedisError);
    expect(errors[0]!.message).toMatch(/renewal thread exited/);
    await sleep(3 * LEASE_MS);
    expect(lost).toEqual([]);
    expect(lease.signal.aborted).toBe(false);
    await lease.release();
  });

  it('a thread that cannot connect says so (`error`), and the main thread renews', async () => {
    const { locks, lost, errors } = threaded(10_000, { fail: '1' });
    const lease = await locks.getLock('no-thread').acquire();
    await until(() => errors.length > 0, 3 * LEASE_MS);
    expect(errors[0]!.message).toMatch(/could not connect: this connect module fails on purpose/);
    await sleep(2 * LEASE_MS);
    expect(lost).toEqual([]);
    expect(lease.signal.aborted).toBe(false);
    await lease.release();
  });

  it('refuses a bad renewalThread before anything reaches Redis', () => {
    const connection = fx.lockConnection();
    const make = (renewalThread: unknown) => () => new LockClient(connection, { renewalThread } as LockClientOptions);
    expect(make({})).toThrow(InvalidArgumentError);
    expect(make({ connect: '' })).toThrow(/renewalThread.connect/);
    expect(make({ connect: 42 })).toThrow(/renewalThread.connect/);
    expect(make({ connect: './x.mjs', maxStall: 999 })).toThrow(/renewalThread.maxStall. must be at least 1000/);
    expect(make({ connect: './x.mjs', other: 1 })).toThrow(InvalidArgumentError);
    // Run from the sources with no program named (a user's tsx app importing rlock's sources).
    useRenewalWorkerScript(undefined);
    try {
      expect(make({ connect: './x.mjs' })).toThrow(InvalidArgumentError);
      expect(make({ connect: './x.mjs' })).toThrow(/the renewal thread's program is missing .*renewal-worker\.js/);
    } finally {
      useRenewalWorkerScript(WORKER);
    }
  });

  describe('the holder in a process of its own', () => {
    /** Runs the stall worker; resolves once it printed `marker`, with the time then and its later output. */
    const holder = (mode: string, blockMs: number, maxStallMs = MAX_STALL_MS) => {
      const child = spawn(
        process.execPath,
        [childBundle('spec/helpers/stall-worker.ts'), TEST_CLIENT, fx.url, fx.prefix, String(LEASE_MS), String(maxStallMs), String(blockMs), mode, WORKER.href, connectModule(fx.url, { ready: `${fx.prefix}:thread-up` }).href, `${fx.prefix}:thread-up`],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const printed = async (marker: string): Promise<number> => {
        await until(() => out.includes(`${marker}\n`) || child.exitCode !== null, 10_000);
        if (!out.includes(`${marker}\n`)) throw new Error(`the holder exited (${child.exitCode}): ${err}`);
        return performance.now();
      };
      const report = async (): Promise<{ held: boolean; lost: string[]; aborted: boolean; reason?: string }> => {
        await until(() => child.exitCode !== null, 15_000);
        const line = out.trim().split('\n').at(-1)!;
        return JSON.parse(line) as { held: boolean; lost: string[]; aborted: boolean; reason?: string };
      };
      fx.track({ close: () => Promise.resolve(void child.kill('SIGKILL')) });
      return { child, printed, report };
    };
    /** Polls a rival's tryLock(0); resolves with when it got the lock, or undefined after `forMs`. */
    const rivalTakes = async (forMs: number): Promise<number | undefined> => {
      const lock = fx.client().getLock('stall');
      const deadline = performance.now() + forMs;
      while (performance.now() < deadline) {
        if (await lock.tryLock(0, 60_000)) return performance.now();
        await sleep(20);
      }
      return undefined;
    };

    it('blocked for 3 leases: a rival’s tryLock fails throughout, and the holder carries on', async () => {
      const { printed, report } = holder('hold', 3 * LEASE_MS, 10_000);
      await printed('blocking');
      // Until shortly before the block ends: the holder releases right after it.
      expect(await rivalTakes(3 * LEASE_MS - 300)).toBeUndefined();
      expect(await report()).toEqual({ held: true, lost: [], aborted: false });
    });

    it(`blocked past maxStall: a rival gets the lock within maxStall + one lease of the block, and the holder is told 'stalled'`, async () => {
      const { printed, report } = holder('hold', MAX_STALL_MS + 2 * LEASE_MS + MARGIN_MS);
      const blocking = await printed('blocking');
      const taken = await rivalTakes(MAX_STALL_MS + 2 * LEASE_MS);
      expect(taken).toBeDefined();
      expect(taken! - blocking).toBeLessThan(MAX_STALL_MS + LEASE_MS + MARGIN_MS);
      expect(await report()).toEqual({ held: false, lost: ['stalled'], aborted: true, reason: 'stalled' });
    });

    it('a hold released just before a block is not renewed through it: a rival gets it within a lease', async () => {
      const { printed, report } = holder('released', 3 * LEASE_MS);
      const blocking = await printed('blocking');
      const taken = await rivalTakes(3 * LEASE_MS);
      expect(taken).toBeDefined();
      expect(taken! - blocking).toBeLessThan(LEASE_MS + MARGIN_MS);
      expect((await report()).held).toBe(false);
    });

    it('a process that forgets locks.close() still exits once its connection closed: the thread keeps nothing alive', async () => {
      const { child, printed } = holder('idle', 0);
      const quit = await printed('quit');
      await until(() => child.exitCode !== null, 3_000);
      expect(child.exitCode).toBe(0);
      expect(performance.now() - quit).toBeLessThan(2_000);
    });

    it('a holder killed with SIGKILL frees the lock within one lease', async () => {
      const { child, printed } = holder('killed', 0);
      await printed('held');
      child.kill('SIGKILL');
      const killed = performance.now();
      const taken = await rivalTakes(3 * LEASE_MS);
      expect(taken).toBeDefined();
      expect(taken! - killed).toBeLessThan(LEASE_MS + MARGIN_MS);
    });
  });
});

describe('renewalThread: RedLock members', () => {
  const servers = useServers(3);
  beforeAll(() => useRenewalWorkerScript(WORKER));
  afterAll(() => useRenewalWorkerScript(undefined));

  it('a RedLock whose holder blocks for 3 leases keeps a majority and is not lost', async () => {
    const clients = servers.list.map((server) => {
      const { connection, close } = connectStandalone(server.url);
      const connect = connectModule(server.url, { ready: 'red-thread-up' });
      const client = new LockClient(connection, { keyPrefix: 'red-thread', watchdogTimeout: LEASE_MS, renewalThread: { connect, maxStall: 10_000 } });
      servers.track({ close: async () => (await client.close(), await close()) });
      return client;
    });
    const lost: string[] = [];
    for (const client of clients) client.on('lost', (info) => lost.push(info.reason));
    const red = new RedLock(...clients.map((client) => client.getLock('red')), { nodeTimeout: 1_000 });
    const lease = await red.acquire();
    const admins = servers.list.map((server) => servers.connect(server));
    await until(async () => (await Promise.all(admins.map((admin) => admin.exists('red-thread-up')))).every((n) => n === 1));
    block(3 * LEASE_MS);
    const present = await Promise.all(admins.map((admin) => admin.exists('{red-thread:red}')));
    expect(present).toEqual([1, 1, 1]);
    await sleep(50);
    expect(lost).toEqual([]);
    expect(lease.signal.aborted).toBe(false);
    await lease.release();
  });
});
