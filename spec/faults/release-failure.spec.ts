import type { RedisOptions } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockRedisError, type Lease, type LockClient } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// A release that never reaches Redis must not leave the hold behind: once the owner asked to
// release, the watchdog stops renewing, so the lock frees within watchdogTimeout at the latest.

const WATCHDOG_MS = 1_200;
const SLACK_MS = 500;

// No resend after the reset. With maxRetriesPerRequest 0 ioredis rejects the unanswered call
// at the reset. (With 1, ioredis 5.11 drops it on reconnect and its promise never settles.)
const FAILS_AT_RESET: RedisOptions = { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 };
const DROPPED_SILENTLY: RedisOptions = { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 1 };

describe('release failure: no orphaned holds', () => {
  const rig = useFaultRig();

  const holderClient = async (options: RedisOptions): Promise<LockClient> => {
    const redis = rig.connect('proxy', options);
    await redis.ping();
    return rig.client(redis, { watchdogTimeout: WATCHDOG_MS });
  };

  /** Releases `lease` while the proxy drops every byte, then resets and heals: the release is lost. */
  const loseRelease = async (lease: Lease): Promise<{ releasedAt: number; outcome: Promise<unknown> }> => {
    rig.proxy.blackhole({ drop: true });
    const releasedAt = performance.now();
    const outcome = lease.release().then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await sleep(100);
    rig.proxy.resetAll();
    rig.proxy.heal();
    return { releasedAt, outcome };
  };

  /** A direct rival tries until `deadline` (performance.now() ms). */
  const rivalGetsItBy = async (name: string, deadline: number): Promise<{ got: boolean; rival: ReturnType<LockClient['getLock']> }> => {
    const rival = rig.client(rig.connect('direct')).getLock(name);
    const got = await rival.tryLock(Math.max(0, deadline - performance.now()), 30_000);
    return { got, rival };
  };

  it('a failed release rejects with LockRedisError, and the lock frees within watchdogTimeout', async () => {
    const holder = await holderClient(FAILS_AT_RESET);
    const lease = await holder.getLock('failed').acquire();
    const { releasedAt, outcome } = await loseRelease(lease);

    const { got, rival } = await rivalGetsItBy('failed', releasedAt + WATCHDOG_MS + SLACK_MS);
    expect(got, 'the rival got the lock within watchdogTimeout + 500 ms of the release').toBe(true);

    const error = await outcome;
    expect(error).toBeInstanceOf(LockRedisError);
    expect((error as LockRedisError).operation).toBe('release');
    expect((error as LockRedisError).cause).toBeInstanceOf(Error);

    // Retrying the release is allowed, and changes nothing for the new holder.
    await expect(lease.release()).resolves.toBeUndefined();
    expect(await rival.isHeldByCurrentOwner()).toBe(true);
    expect(await rival.getHoldCount()).toBe(1);
    // Only the rival's hold (its count and its call log) is in the hash.
    const fields = await rig.admin.hkeys(rig.key('failed'));
    expect(fields.filter((field) => !field.startsWith('log:'))).toHaveLength(1);
    await rival.unlock();
  });

  it('a failed release can be retried at once, and the retry frees the lock', async () => {
    const holder = await holderClient(FAILS_AT_RESET);
    const lease = await holder.getLock('retry').acquire();
    const { outcome } = await loseRelease(lease);
    expect(await outcome).toBeInstanceOf(Error);
    await expect(lease.release()).resolves.toBeUndefined();
    expect(await rig.admin.exists(rig.key('retry'))).toBe(0);
  });

  it('a release ioredis drops without an answer: the lock still frees within watchdogTimeout', async () => {
    const holder = await holderClient(DROPPED_SILENTLY);
    const lease = await holder.getLock('dropped').acquire();
    const { releasedAt } = await loseRelease(lease);
    const { got } = await rivalGetsItBy('dropped', releasedAt + WATCHDOG_MS + SLACK_MS);
    expect(got, 'the rival got the lock within watchdogTimeout + 500 ms of the release').toBe(true);
  });

  it('a release retried in the background never takes back a later acquisition by the same owner', async () => {
    const holder = await holderClient(FAILS_AT_RESET);
    const lock = holder.getLock('again');
    await holder.runInContext(async () => {
      const lease = await lock.acquire();
      // Redis runs the release, its reply is lost and the call fails: it goes on in the background.
      rig.proxy.swallowReplies(1);
      const error = await lease.release().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(LockRedisError);
      expect(await rig.admin.exists(rig.key('again')), 'the release was applied').toBe(0);
      // The same owner takes the lock again while the release is still retried.
      await lock.lock();
      // The retries (from 50 ms on, doubling) have landed long before this.
      await sleep(1_500);
      expect(await lock.isHeldByCurrentOwner(), 'the owner still holds its new hold').toBe(true);
      // Retrying the first Lease's release answers what its release did, and takes nothing of the new hold.
      await expect(lease.release()).resolves.toBeUndefined();
      expect(await lock.getHoldCount(), 'the new hold is untouched').toBe(1);
      const rival = rig.client(rig.connect('direct')).getLock('again');
      expect(await rival.tryLock(0, 10_000), 'a rival cannot take it').toBe(false);
      await lock.unlock();
    });
  });
});
