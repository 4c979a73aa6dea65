import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockAcquireTimeoutError, LockClientClosedError, LockLostError, LockNotHeldError, type LeaderInfo } from '../../lib/index.js';
import { sleep, until, useLockFixture } from '../helpers/fixtures.js';
import { CommandRecorder } from '../helpers/command-stats.js';

/** Collects what an observe() loop yields until the returned stop() is called. */
function collect(iterable: AsyncIterable<LeaderInfo | null>): { seen: (LeaderInfo | null)[]; done: Promise<void> } {
  const seen: (LeaderInfo | null)[] = [];
  const done = (async () => {
    for await (const leader of iterable) seen.push(leader);
  })();
  return { seen, done };
}

describe('election: campaign, leader, resign', () => {
  const fx = useLockFixture();

  it('one leader at a time; a resigned leader is succeeded at once; epochs strictly increase', async () => {
    const a = fx.client().getElection('e');
    const b = fx.client().getElection('e');
    expect(await a.leader()).toBeNull();
    const first = await a.campaign({ value: 'a' });
    expect(first.value).toBe('a');
    expect(await b.leader()).toEqual({ value: 'a', epoch: first.epoch });
    await expect(b.campaign({ value: 'b', waitTime: 0 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
    const waiting = b.campaign({ value: 'b' });
    await sleep(100);
    const resignedAt = performance.now();
    await first.resign();
    const second = await waiting;
    // Pushed: the waiting campaign leads at once, not after a poll or the leader's TTL (30 s).
    expect(performance.now() - resignedAt).toBeLessThan(1_000);
    expect(second.epoch).toBeGreaterThan(first.epoch);
    expect(await a.leader()).toEqual({ value: 'b', epoch: second.epoch });
    await second.resign();
    await second.resign();
    expect(await a.leader()).toBeNull();
    const third = await a.campaign();
    expect(third.epoch).toBeGreaterThan(second.epoch);
    expect(third.value).toBe('');
    await third.resign();
    // Only the epoch counter stays (like a fenced lock's token counter).
    expect(await fx.keys()).toEqual([`{${fx.prefix}:e}:election:epoch`]);
  });

  it('campaigns of one client and one context are still rivals (each is a candidate of its own)', async () => {
    const locks = fx.client();
    await locks.runInContext(async () => {
      const first = await locks.getElection('e').campaign();
      await expect(locks.getElection('e').campaign({ waitTime: 50 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
      await first.resign();
    });
  });

  it('a dead leader (its client stops renewing) is succeeded within watchdogTimeout, and its signal aborts first', async () => {
    const watchdogTimeout = 1_000;
    const dying = fx.client({ watchdogTimeout });
    const leadership = await dying.getElection('e').campaign({ value: 'dying' });
    let abortedAt = Infinity;
    leadership.signal.addEventListener('abort', () => (abortedAt = performance.now()));
    await sleep(400); // renewed once at least
    const deadAt = performance.now();
    await dying.close(); // stops renewing; the hold stays in Redis until its lease ends
    const next = await fx.client().getElection('e').campaign({ value: 'next', waitTime: 5_000 });
    const ledAt = performance.now();
    expect(ledAt - deadAt).toBeLessThan(watchdogTimeout + 300);
    expect(abortedAt).toBeLessThan(ledAt);
    expect(leadership.signal.reason).toBeInstanceOf(LockClientClosedError);
    expect(next.epoch).toBeGreaterThan(leadership.epoch);
    await next.resign();
  });

  it('the watchdog keeps a leader leading past its watchdogTimeout', async () => {
    const locks = fx.client({ watchdogTimeout: 600 });
    const leadership = await locks.getElection('e').campaign();
    await sleep(1_500);
    expect(leadership.signal.aborted).toBe(false);
    expect(await fx.client().getElection('e').leader()).toEqual({ value: '', epoch: leadership.epoch });
    await leadership.resign();
  });

  it('proclaim publishes a new value without a new epoch; after a loss it rejects with LockLostError', async () => {
    const locks = fx.client({ watchdogTimeout: 900 });
    locks.on('lost', () => undefined);
    const leadership = await locks.getElection('e').campaign({ value: 'v1' });
    await leadership.proclaim('v2');
    expect(leadership.value).toBe('v2');
    expect(await fx.client().getElection('e').leader()).toEqual({ value: 'v2', epoch: leadership.epoch });
    // Taken away in Redis: proclaim finds it gone.
    await fx.redis().del(`{${fx.prefix}:e}:election`);
    await expect(leadership.proclaim('v3')).rejects.toBeInstanceOf(LockLostError);
    await until(() => leadership.signal.aborted, 3_000);
    await leadership.resign();
    await expect(leadership.proclaim('v4')).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('a signal aborts a waiting campaign with its reason; the campaign leaves no trace', async () => {
    const locks = fx.client();
    const leader = await locks.getElection('e').campaign();
    const controller = new AbortController();
    const waiting = fx.client().getElection('e').campaign({ signal: controller.signal });
    await sleep(50);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    await leader.resign();
    expect(await locks.getElection('e').leader()).toBeNull();
  });

  it('bad input is an InvalidArgumentError before anything is sent', async () => {
    const locks = fx.client();
    const recorder = await CommandRecorder.start(fx.url);
    expect(() => locks.getElection('')).toThrow(InvalidArgumentError);
    expect(() => locks.getElection(42 as unknown as string)).toThrow(InvalidArgumentError);
    const election = locks.getElection('e');
    await expect(election.campaign({ value: 42 as unknown as string })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(election.campaign({ waitTime: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(election.campaign({ signal: 'x' as unknown as AbortSignal })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(election.campaign({ wait: 1 } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => election.observe({ signal: {} as AbortSignal })).toThrow(InvalidArgumentError);
    await recorder.stop();
    expect(recorder.commands.filter((args) => args.join(' ').includes(fx.prefix))).toEqual([]);
    const leadership = await election.campaign();
    await expect(leadership.proclaim(undefined as unknown as string)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(leadership.proclaim({} as unknown as string)).rejects.toBeInstanceOf(InvalidArgumentError);
    await leadership.resign();
  });
});

describe('election: observe', () => {
  const fx = useLockFixture();

  it('yields the current leader, then every change in order (campaign, proclaim, resign, next leader)', async () => {
    const observer = fx.client();
    const controller = new AbortController();
    const { seen, done } = collect(observer.getElection('e').observe({ signal: controller.signal }));
    await until(() => seen.length === 1);
    expect(seen).toEqual([null]);
    const a = fx.client().getElection('e');
    const first = await a.campaign({ value: 'a1' });
    await first.proclaim('a2');
    await first.proclaim('a3');
    const next = a.campaign({ value: 'b' });
    await first.resign();
    const second = await next;
    await until(() => seen.length === 6);
    expect(seen).toEqual([
      null,
      { value: 'a1', epoch: first.epoch },
      { value: 'a2', epoch: first.epoch },
      { value: 'a3', epoch: first.epoch },
      null,
      { value: 'b', epoch: second.epoch },
    ]);
    controller.abort();
    await done;
    await second.resign();
  });

  it('a leader that dies in silence is observed gone when its lease ends (no announcement)', async () => {
    const dying = fx.client({ watchdogTimeout: 800 });
    const leadership = await dying.getElection('e').campaign({ value: 'x' });
    const iterator = fx.client().getElection('e').observe();
    expect((await iterator.next()).value).toEqual({ value: 'x', epoch: leadership.epoch });
    await dying.close();
    const closedAt = performance.now();
    expect((await iterator.next()).value).toBeNull();
    expect(performance.now() - closedAt).toBeLessThan(800 + 500);
    await iterator.return?.();
  });

  it('many observers in one client share one subscription; breaking the loop ends it; close() rejects a waiting loop', async () => {
    const observer = fx.client();
    const election = observer.getElection('e');
    const one = election.observe();
    const two = election.observe();
    expect((await one.next()).value).toBeNull();
    expect((await two.next()).value).toBeNull();
    const leadership = await fx.client().getElection('e').campaign({ value: 'v' });
    expect((await one.next()).value).toEqual({ value: 'v', epoch: leadership.epoch });
    expect((await two.next()).value).toEqual({ value: 'v', epoch: leadership.epoch });
    await one.return?.();
    expect(await one.next()).toEqual({ value: undefined, done: true });
    const pending = expect(two.next()).rejects.toBeInstanceOf(LockClientClosedError);
    await observer.close();
    await pending;
    await leadership.resign();
  });

  it('when Redis lost the election’s keys (epochs begin again), observers follow the new epochs at once', async () => {
    const iterator = fx.client().getElection('e').observe();
    expect((await iterator.next()).value).toBeNull();
    const election = fx.client().getElection('e');
    for (const epoch of [1, 2]) {
      const leadership = await election.campaign({ value: `before-${epoch}` });
      expect((await iterator.next()).value).toEqual({ value: `before-${epoch}`, epoch });
      await leadership.resign();
      expect((await iterator.next()).value).toBeNull();
    }
    // As a restart without persistence would: every key of the election is gone, the counter too.
    await fx.redis().del(`{${fx.prefix}:e}:election:epoch`);
    const after = await election.campaign({ value: 'after' });
    expect(after.epoch).toBe(1);
    const next = await Promise.race([iterator.next(), sleep(3_000).then(() => 'nothing within 3 s')]);
    expect(next).toEqual({ value: { value: 'after', epoch: 1 }, done: false });
    await iterator.return?.();
    await after.resign();
  });

  it('an aborted signal ends the loop at once', async () => {
    const controller = new AbortController();
    controller.abort();
    const { seen, done } = collect(fx.client().getElection('e').observe({ signal: controller.signal }));
    await done;
    expect(seen).toEqual([]);
  });
});
