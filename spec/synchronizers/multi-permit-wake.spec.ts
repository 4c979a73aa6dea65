import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { LockClient, Permit, RSemaphore } from '../../lib/index.js';
import { freezeFor, sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

// A waiter is woken as soon as enough permits are free for its request, however many events it
// took to free them: several releases, leases that ran out, holders that died, waiters that gave
// up, clients that closed. Each case checks the waiter got its permits well inside its waitTime
// (within WOKEN_MS of the event that made enough free) and that never more than the limit was out.

const LIMIT = 3;
/** A waiter woken by a notice has its permits within this (its waitTime is far longer). */
const WOKEN_MS = 1_000;
const WAIT_MS = 5_000;
const LEASE_MS = 10_000;

/** Permits the test holds, to check the limit. */
class Ledger {
  out = 0;
  max = 0;

  took(permit: Permit): Permit {
    this.out += permit.permits;
    this.max = Math.max(this.max, this.out);
    return permit;
  }

  async release(permit: Permit): Promise<void> {
    this.out -= permit.permits;
    await permit.release();
  }
}

/** A waiting acquisition; `at` is when it resolved. */
interface Waiting {
  readonly done: Promise<Permit>;
  readonly at: () => number | undefined;
}

function waiting(ledger: Ledger, acquire: Promise<Permit>): Waiting {
  let at: number | undefined;
  const done = acquire.then((permit) => {
    at = performance.now();
    return ledger.took(permit);
  });
  // Checked by the test; a rejection here must not be reported as unhandled first.
  done.catch(() => undefined);
  return { done, at: () => at };
}

/** Asserts `waiter` gets its permits within WOKEN_MS of `since`. */
async function wokenWithin(waiter: Waiting, since: number): Promise<Permit> {
  const permit = await waiter.done;
  expect(waiter.at()! - since).toBeLessThan(WOKEN_MS);
  return permit;
}

describe('semaphore: a waiter wakes once enough permits are free, however they were freed', () => {
  const fx = useLockFixture();
  const waitersKey = (name: string): string => `{${fx.prefix}:${name}}:semaphore:waiters`;
  const queueKey = (name: string): string => `{${fx.prefix}:${name}}:semaphore:queue`;
  const permitsKey = (name: string): string => `{${fx.prefix}:${name}}:semaphore`;

  /** Until `client` is in the waiter set, then a little longer (it subscribes and asks again). */
  async function registered(admin: Redis, client: LockClient, name = 's'): Promise<void> {
    await until(async () => (await admin.zscore(waitersKey(name), client.id)) !== null);
    await sleep(150);
  }

  /** `n` single permits held by a client of their own, leaseTime LEASE_MS. */
  async function holdSingles(ledger: Ledger, n: number, name = 's', fair = false): Promise<Permit[]> {
    const sem = fx.client().getSemaphore(name, { permits: LIMIT, fair });
    const held: Permit[] = [];
    for (let i = 0; i < n; i += 1) held.push(ledger.took(await sem.acquire({ leaseTime: LEASE_MS })));
    return held;
  }

  const semaphore = (client: LockClient, name = 's', fair = false): RSemaphore => client.getSemaphore(name, { permits: LIMIT, fair });

  it('a release: 2 of 3 wanted, the second of two single releases makes 2 free', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const [p1, p2, p3] = await holdSingles(ledger, 3);
    const b = fx.client();
    const waiter = waiting(ledger, semaphore(b).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, b);
    await ledger.release(p1!);
    await sleep(200);
    expect(waiter.at()).toBeUndefined(); // 1 free: it keeps waiting
    await ledger.release(p2!);
    const permit = await wokenWithin(waiter, performance.now());
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(permit);
    await ledger.release(p3!);
    expect(await fx.keys(admin)).toEqual([]);
  });

  it('several releases in a row: 3 of 3 wanted, three single releases sent at once', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const held = await holdSingles(ledger, 3);
    const b = fx.client();
    const waiter = waiting(ledger, semaphore(b).acquire({ permits: 3, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, b);
    const since = performance.now();
    await Promise.all(held.map((permit) => ledger.release(permit)));
    const permit = await wokenWithin(waiter, since);
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(permit);
    expect(await fx.keys(admin)).toEqual([]);
  });

  it('a lease that ran out counts, pruned by whoever calls next (here a failing tryAcquire)', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const [p1, p2, p3] = await holdSingles(ledger, 3);
    const b = fx.client();
    // Its first attempts see only 10 s leases: it sleeps until a notice.
    const waiter = waiting(ledger, semaphore(b).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, b);
    await ledger.release(p1!);
    // A short lease taken after the waiter slept: it ends with nobody told.
    const short = await semaphore(fx.client()).tryAcquire({ leaseTime: 300 });
    expect(short).not.toBeNull();
    await ledger.release(p2!);
    await sleep(500);
    expect(waiter.at()).toBeUndefined();
    // The next call (any client, any outcome) drops the ended lease: 2 are free now.
    const since = performance.now();
    expect(await semaphore(fx.client()).tryAcquire({ permits: 3 })).toBeNull();
    const permit = await wokenWithin(waiter, since);
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(permit);
    await ledger.release(p3!);
    expect(await fx.keys(admin)).toEqual([]);
  });

  it('a holder that died (SIGKILL): its permits, back when its lease ends, count for the next release', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const name = 'shared'; // the worker's semaphore
    const child = spawn(process.execPath, [
      childBundle('spec/helpers/synchronizer-worker.ts'),
      ...[fx.url, fx.prefix, 'hold', String(LIMIT), '1', '1500'],
    ]);
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('held');
    const [p1, p2] = await holdSingles(ledger, 2, name);
    const b = fx.client();
    const waiter = waiting(ledger, semaphore(b, name).acquire({ permits: 2, waitTime: 8_000, leaseTime: LEASE_MS }));
    await registered(admin, b, name);
    child.kill('SIGKILL');
    await once(child, 'exit');
    // The dead holder's lease ends (≤ 1.5 s); the waiter's own timer drops it and finds 1 free.
    // Leases are scored above 2^32 (the set's bookkeeping below): 2 left.
    await until(async () => (await admin.zcount(permitsKey(name), 2 ** 32, '+inf')) === 2, 5_000);
    await sleep(100);
    expect(waiter.at()).toBeUndefined();
    await ledger.release(p1!);
    const permit = await wokenWithin(waiter, performance.now());
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(permit);
    await ledger.release(p2!);
    expect(await fx.keys(admin)).toEqual([]);
  }, 30_000);

  for (const how of ['timeout', 'abort'] as const) {
    it(`a waiter that gave up (${how}) with a notice on its way: the notice passes on with every free permit`, async () => {
      const admin = fx.redis();
      const ledger = new Ledger();
      const [p1, p2, p3] = await holdSingles(ledger, 3);
      const x = fx.client();
      const controller = new AbortController();
      const quitter = semaphore(x).acquire({ waitTime: how === 'timeout' ? 800 : WAIT_MS, signal: controller.signal });
      const quit = quitter.then(
        () => 'acquired',
        (error: unknown) => (error instanceof Error ? error.name : 'error'),
      );
      await registered(admin, x); // first in the waiter set
      const b = fx.client();
      const waiter = waiting(ledger, semaphore(b).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await registered(admin, b);
      // The release's notice for x arrives only after x gave up.
      const released = ledger.release(p1!);
      freezeFor(how === 'timeout' ? 800 : 150);
      if (how === 'abort') controller.abort(new Error('stop'));
      await released;
      expect(await quit).toBe(how === 'timeout' ? 'LockAcquireTimeoutError' : 'Error');
      await sleep(200);
      expect(waiter.at()).toBeUndefined(); // 1 free
      await ledger.release(p2!);
      const permit = await wokenWithin(waiter, performance.now());
      expect(ledger.max).toBeLessThanOrEqual(LIMIT);
      await ledger.release(permit);
      await ledger.release(p3!);
      await until(async () => (await fx.keys(admin)).length === 0);
    });
  }

  it('close() of a waiting client: what it was offered, or would be, goes to the others', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const [p1, p2, p3] = await holdSingles(ledger, 3);
    const x = fx.client();
    const closed = semaphore(x).acquire({ waitTime: WAIT_MS }).catch((error: unknown) => (error as Error).name);
    await registered(admin, x); // first in the waiter set
    const b = fx.client();
    const waiter = waiting(ledger, semaphore(b).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, b);
    // The release and the close race: the notice for x may reach it while it closes.
    const released = ledger.release(p1!);
    await x.close();
    await released;
    expect(await closed).toBe('LockClientClosedError');
    await sleep(200);
    expect(waiter.at()).toBeUndefined();
    await ledger.release(p2!);
    const permit = await wokenWithin(waiter, performance.now());
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(permit);
    await ledger.release(p3!);
    await until(async () => (await fx.keys(admin)).length === 0);
  });

  it('close() of a client waiting in the set before any release: the releases that follow wake the others', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const [p1, p2, p3] = await holdSingles(ledger, 3);
    const x = fx.client();
    const closed = semaphore(x).acquire({ waitTime: WAIT_MS }).catch((error: unknown) => (error as Error).name);
    await registered(admin, x);
    const b = fx.client();
    const waiter = waiting(ledger, semaphore(b).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, b);
    await x.close();
    expect(await closed).toBe('LockClientClosedError');
    await ledger.release(p1!);
    await sleep(200);
    expect(waiter.at()).toBeUndefined();
    await ledger.release(p2!);
    const permit = await wokenWithin(waiter, performance.now());
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(permit);
    await ledger.release(p3!);
    expect(await fx.keys(admin)).toEqual([]);
  });

  it('mixed request sizes on two clients: 3 wanted and 1 wanted; the 3 wakes when the 1 gives its permit back', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const [p1, p2, p3] = await holdSingles(ledger, 3);
    const l = fx.client();
    const large = waiting(ledger, semaphore(l).acquire({ permits: 3, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, l);
    const s = fx.client();
    const small = waiting(ledger, semaphore(s).acquire({ waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, s);
    await ledger.release(p1!);
    const one = await wokenWithin(small, performance.now()); // 1 free: the small request
    await ledger.release(p2!);
    await ledger.release(p3!);
    await sleep(200);
    expect(large.at()).toBeUndefined(); // 2 free
    await ledger.release(one);
    const all = await wokenWithin(large, performance.now());
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(all);
    expect(await fx.keys(admin)).toEqual([]);
  });

  it('mixed request sizes on one client (1 and 3) and another (1): what the first cannot use goes to the other', async () => {
    const admin = fx.redis();
    const ledger = new Ledger();
    const holder = semaphore(fx.client());
    const two = ledger.took(await holder.acquire({ permits: 2, leaseTime: LEASE_MS }));
    const [p3] = await holdSingles(ledger, 1);
    const x = fx.client();
    const xOne = waiting(ledger, semaphore(x).acquire({ waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    const xThree = waiting(ledger, semaphore(x).acquire({ permits: 3, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, x); // first in the set, need hint '1,4'
    const y = fx.client();
    const yOne = waiting(ledger, semaphore(y).acquire({ waitTime: WAIT_MS, leaseTime: LEASE_MS }));
    await registered(admin, y);
    // 2 free at once: one for x's 1, one for y's 1 (x's 3 does not fit).
    await ledger.release(two);
    const since = performance.now();
    const [a, b] = await Promise.all([wokenWithin(xOne, since), wokenWithin(yOne, since)]);
    expect(xThree.at()).toBeUndefined();
    await ledger.release(a);
    await ledger.release(b);
    await sleep(200);
    expect(xThree.at()).toBeUndefined(); // 2 free
    await ledger.release(p3!);
    const three = await wokenWithin(xThree, performance.now());
    expect(ledger.max).toBeLessThanOrEqual(LIMIT);
    await ledger.release(three);
    expect(await fx.keys(admin)).toEqual([]);
  });

  describe('fair', () => {
    // Waiters that check in only every 10 s: a wake-up within WOKEN_MS is the notice's, never a check-in's.
    const patient = (): LockClient => fx.client({ fairLockWaitTimeout: 30_000 });

    it('the head needs 2, releases free 1 at a time: it wakes at the second; the 1 behind it does not overtake', async () => {
      const admin = fx.redis();
      const ledger = new Ledger();
      const [p1, p2, p3] = await holdSingles(ledger, 3, 'f', true);
      const head = waiting(ledger, semaphore(fx.client(), 'f', true).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await until(async () => (await admin.zcard(queueKey('f'))) === 1);
      const behind = waiting(ledger, semaphore(fx.client(), 'f', true).acquire({ waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await until(async () => (await admin.zcard(queueKey('f'))) === 2);
      await sleep(150);
      await ledger.release(p1!);
      await sleep(200);
      expect(head.at()).toBeUndefined();
      expect(behind.at()).toBeUndefined(); // 1 free, but the head is first
      expect(await semaphore(fx.client(), 'f', true).tryAcquire()).toBeNull();
      await ledger.release(p2!);
      const two = await wokenWithin(head, performance.now());
      await sleep(200);
      expect(behind.at()).toBeUndefined(); // 0 free
      await ledger.release(p3!);
      const one = await wokenWithin(behind, performance.now());
      expect(ledger.max).toBeLessThanOrEqual(LIMIT);
      await ledger.release(two);
      await ledger.release(one);
      expect(await fx.keys(admin)).toEqual([]);
    });

    it('mixed sizes (3 at the head, then 1): a release that completes the 3 wakes it, then the 1', async () => {
      const admin = fx.redis();
      const ledger = new Ledger();
      const [p1, p2, p3] = await holdSingles(ledger, 3, 'f', true);
      const head = waiting(ledger, semaphore(fx.client(), 'f', true).acquire({ permits: 3, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await until(async () => (await admin.zcard(queueKey('f'))) === 1);
      const behind = waiting(ledger, semaphore(fx.client(), 'f', true).acquire({ waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await until(async () => (await admin.zcard(queueKey('f'))) === 2);
      await sleep(150);
      await ledger.release(p1!);
      await ledger.release(p2!);
      await sleep(200);
      expect(head.at()).toBeUndefined();
      expect(behind.at()).toBeUndefined();
      await ledger.release(p3!);
      const three = await wokenWithin(head, performance.now());
      await ledger.release(three);
      const one = await wokenWithin(behind, performance.now());
      expect(ledger.max).toBeLessThanOrEqual(LIMIT);
      await ledger.release(one);
      expect(await fx.keys(admin)).toEqual([]);
    });

    it('a head that gives up leaves at once: the 2 behind it wakes when 2 are free', async () => {
      const admin = fx.redis();
      const ledger = new Ledger();
      const [p1, p2, p3] = await holdSingles(ledger, 3, 'f', true);
      const quitter = semaphore(patient(), 'f', true).acquire({ permits: 3, waitTime: 700 }).catch((error: unknown) => (error as Error).name);
      await until(async () => (await admin.zcard(queueKey('f'))) === 1);
      const next = waiting(ledger, semaphore(patient(), 'f', true).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await until(async () => (await admin.zcard(queueKey('f'))) === 2);
      await ledger.release(p1!);
      await ledger.release(p2!);
      expect(next.at()).toBeUndefined(); // 2 free, but the 3 is ahead
      expect(await quitter).toBe('LockAcquireTimeoutError');
      const permit = await wokenWithin(next, performance.now());
      expect(ledger.max).toBeLessThanOrEqual(LIMIT);
      await ledger.release(permit);
      await ledger.release(p3!);
      expect(await fx.keys(admin)).toEqual([]);
    });

    it('a lease that ran out counts, pruned by whoever calls next: the head that needs 2 is told', async () => {
      const admin = fx.redis();
      const ledger = new Ledger();
      const [p1, p2, p3] = await holdSingles(ledger, 3, 'f', true);
      const head = waiting(ledger, semaphore(patient(), 'f', true).acquire({ permits: 2, waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await until(async () => (await admin.zcard(queueKey('f'))) === 1);
      await sleep(150);
      await ledger.release(p1!);
      // A short lease taken by a non-fair object on the same name (it does not queue): it ends with nobody told.
      const short = await semaphore(fx.client(), 'f').tryAcquire({ leaseTime: 300 });
      expect(short).not.toBeNull();
      await ledger.release(p2!);
      await sleep(500);
      expect(head.at()).toBeUndefined(); // 1 free as far as anyone was told
      // A single attempt that fails (someone waits) drops the ended lease: 2 are free, the head is told.
      const since = performance.now();
      expect(await semaphore(fx.client(), 'f', true).tryAcquire()).toBeNull();
      const permit = await wokenWithin(head, since);
      expect(ledger.max).toBeLessThanOrEqual(LIMIT);
      await ledger.release(permit);
      await ledger.release(p3!);
      expect(await fx.keys(admin)).toEqual([]);
    });

    it('close() of the head: the 1 behind it is told at once when a permit is free', async () => {
      const admin = fx.redis();
      const ledger = new Ledger();
      const [p1, p2, p3] = await holdSingles(ledger, 3, 'f', true);
      const x = patient();
      const closed = semaphore(x, 'f', true)
        .acquire({ permits: 3, waitTime: WAIT_MS })
        .catch((error: unknown) => (error as Error).name);
      await until(async () => (await admin.zcard(queueKey('f'))) === 1);
      const behind = waiting(ledger, semaphore(patient(), 'f', true).acquire({ waitTime: WAIT_MS, leaseTime: LEASE_MS }));
      await until(async () => (await admin.zcard(queueKey('f'))) === 2);
      await sleep(150);
      await ledger.release(p1!);
      await sleep(200);
      expect(behind.at()).toBeUndefined(); // 1 free, but the 3 is ahead
      const since = performance.now();
      await x.close();
      expect(await closed).toBe('LockClientClosedError');
      const one = await wokenWithin(behind, since);
      expect(ledger.max).toBeLessThanOrEqual(LIMIT);
      await ledger.release(one);
      await ledger.release(p2!);
      await ledger.release(p3!);
      expect(await fx.keys(admin)).toEqual([]);
    });
  });
});
