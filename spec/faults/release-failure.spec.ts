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
});
