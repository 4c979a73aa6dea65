import { describe, expect, it } from 'vitest';
import { LockLostError, type LockClient, type LockLostInfo } from '../../lib/index.js';
import { sleep, until } from '../helpers/fixtures.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// The holder's connection goes silent (no reset, no error): its renewal call just hangs. The
// holder must count its lease on its own clock and learn of the loss before anyone else can
// take the lock.

const WATCHDOG_MS = 1_500;
const SLACK_MS = 300;

describe('silent partition: the holder’s clock', () => {
  const rig = useFaultRig();

  const holderClient = async (): Promise<LockClient> => {
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    return rig.client(redis, { watchdogTimeout: WATCHDOG_MS });
  };

  /** Records when (and why) `client` reported the loss of lock `name`. */
  const watchLost = (client: LockClient, name: string): { at: number; infos: LockLostInfo[] } => {
    const seen = { at: Infinity, infos: [] as LockLostInfo[] };
    client.on('lost', (info) => {
      if (info.name !== name) return;
      seen.infos.push(info);
      if (seen.at === Infinity) seen.at = performance.now();
    });
    return seen;
  };

  /** A direct rival waits for the lock; resolves with when it got it. */
  const rivalAcquires = async (name: string): Promise<number> => {
    const rival = rig.client(rig.lockConnect('direct')).getLock(name);
    expect(await rival.tryLock(10_000, 30_000)).toBe(true);
    return performance.now();
  };

  it('watchdog mode: `lost` (expired) and the aborted signal come before a rival acquires', async () => {
    const holder = await holderClient();
    const lost = watchLost(holder, 'wd');
    const lease = await holder.getLock('wd').acquire();
    let abortedAt = Infinity;
    lease.signal.addEventListener('abort', () => (abortedAt = performance.now()));
    await sleep(700); // a renewal or two went through: the silence starts mid-lease

    const silentAt = performance.now();
    rig.proxy.blackhole();
    const rivalAt = await rivalAcquires('wd');
    console.log(
      `[silent-partition] watchdog: lost ${fmt(lost.at - silentAt)} ms after the silence began, ` +
        `${fmt(rivalAt - lost.at)} ms before the rival acquired (rival at ${fmt(rivalAt - silentAt)} ms)`,
    );

    expect(lost.at, '`lost` before the rival acquired').toBeLessThan(rivalAt);
    expect(abortedAt, 'signal aborted before the rival acquired').toBeLessThan(rivalAt);
    expect(lost.at - silentAt).toBeLessThan(WATCHDOG_MS + SLACK_MS);
    expect(lost.infos.map((info) => info.reason)).toEqual(['expired']);
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
    expect((lease.signal.reason as LockLostError).reason).toBe('expired');
  });

  it('fixed lease: the Lease’s signal aborts before a rival acquires', async () => {
    const holder = await holderClient();
    const lost = watchLost(holder, 'fixed');
    const lease = await holder.getLock('fixed').acquire({ leaseTime: WATCHDOG_MS });
    let abortedAt = Infinity;
    lease.signal.addEventListener('abort', () => (abortedAt = performance.now()));
    await sleep(300);

    const silentAt = performance.now();
    rig.proxy.blackhole();
    const rivalAt = await rivalAcquires('fixed');
    console.log(
      `[silent-partition] fixed lease: signal aborted ${fmt(abortedAt - silentAt)} ms after the silence began, ` +
        `${fmt(rivalAt - abortedAt)} ms before the rival acquired`,
    );

    expect(abortedAt, 'signal aborted before the rival acquired').toBeLessThan(rivalAt);
    expect(lost.at, '`lost` before the rival acquired').toBeLessThan(rivalAt);
    expect(lost.infos.map((info) => info.reason)).toEqual(['expired']);
    expect((lease.signal.reason as LockLostError).reason).toBe('expired');
  });

  it('a hung renewal does not stop the watchdog: the loss is reported once, and renewals resume after heal', async () => {
    const holder = await holderClient();
    const lost = watchLost(holder, 'hung');
    await holder.getLock('hung').lock();
    await sleep(700);
    const silentAt = performance.now();
    rig.proxy.blackhole();
    // While the renewal call hangs, the watchdog still reports the loss in time.
    await until(() => lost.infos.length > 0, WATCHDOG_MS + SLACK_MS + 1_000).catch(() => undefined);
    expect(lost.at - silentAt, '`lost` while the renewal hangs').toBeLessThan(WATCHDOG_MS + SLACK_MS);

    rig.proxy.heal();
    const renewed: number[] = [];
    holder.on('renewed', (info) => {
      if (info.name === 'after') renewed.push(performance.now());
    });
    const startedAt = performance.now();
    await holder.getLock('after').lock();
    await until(() => renewed.length >= 2, 2 * WATCHDOG_MS + 1_000);
    expect(renewed[1]! - startedAt).toBeLessThan(WATCHDOG_MS + 1_000);
    // The hung renewal's late answer must not report the same loss again.
    expect(lost.infos.map((info) => info.reason)).toEqual(['expired']);
  });
});

const fmt = (ms: number): string => (Number.isFinite(ms) ? ms.toFixed(1) : 'never');
