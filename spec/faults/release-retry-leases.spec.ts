import { describe, it } from 'vitest';
import { LockRedisError, type Lease, type LockClient, type LockLostInfo, type RLock } from '../../lib/index.js';
import { ping, TEST_CLIENT, type ConnectionOptions } from '../helpers/clients.js';
import { useFaultRig, type OwnFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf, type Kind } from '../helpers/lock-kinds.js';

// Two Leases of one owner (three holds in one context) release at once; Redis runs both releases
// and both replies are lost, so both reject. The user calls release() again on each. Each retry
// is its own Lease's one release (SPEC "A retried release is one call"), whatever the other
// Lease's failure did meanwhile: Redis applies each once, and the third Lease keeps the lock.
// (No permits here: each Permit is a hold of its own, released by its id.) A test may wait the
// release timeout, so the kinds run at once, each on a fault proxy and key prefix of its own
// (FaultRig.own).

/** Every hold outlives the 5 s a release may wait for its answer. */
const LEASE_MS = 20_000;

/** How both replies are lost, and the calls come to reject. */
interface Loss {
  readonly name: string;
  /** The connection of the client under test. */
  readonly connection: ConnectionOptions;
  /** Silence after the reset: a resend (rlock's or the client's) hangs until the release timeout. */
  readonly thenBlackhole: boolean;
  /** Not reachable this way on the client family under test. */
  readonly skip: boolean;
}

const LOSSES: readonly Loss[] = [
  // ioredis rejects what a reset left unanswered and resends nothing: rlock's own retries run.
  // (rlock resends node-redis' and GLIDE's calls itself: answered from the record, they never reject.)
  {
    name: 'rejected at a reset (ioredis, maxRetriesPerRequest 0)',
    connection: { ioredis: { maxRetriesPerRequest: 0 } },
    thenBlackhole: false,
    skip: TEST_CLIENT !== 'ioredis' && TEST_CLIENT !== 'iovalkey',
  },
  // Every client family: the resends go into silence, and the releases reject at the release timeout.
  { name: 'silence after a reset, until the release timeout', connection: {}, thenBlackhole: true, skip: false },
];

/** A lock another owner cannot take while `kind` is held: the write side for a read hold. */
function rivalOf(client: LockClient, kind: Kind, name: string): RLock {
  return lockOf(client, kind === 'read' ? 'write' : kind, name);
}

/** 'resolved', or what it rejected with. */
function outcome(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('two Leases of one owner whose releases both lost their replies, each released again', () => {
  const shared = useFaultRig();

  /** A client whose command connection crosses the test's proxy; `lost` events are collected. */
  const proxied = async (rig: OwnFaultRig, connection: ConnectionOptions): Promise<{ client: LockClient; lost: LockLostInfo[] }> => {
    const redis = rig.lockConnect('proxy', connection);
    await ping(redis);
    const client = rig.client(redis);
    const lost: LockLostInfo[] = [];
    client.on('lost', (info) => lost.push(info));
    return { client, lost };
  };
  const direct = (rig: OwnFaultRig): LockClient => rig.client(rig.lockConnect('direct'));

  for (const loss of LOSSES) {
    describe.skipIf(loss.skip)(loss.name, () => {
      for (const kind of KINDS) {
        it.concurrent(kind, async ({ expect, onTestFinished }) => {
          const rig = await shared.own();
          onTestFinished(() => rig.close());
          const { client, lost } = await proxied(rig, loss.connection);
          const lock = lockOf(client, kind, 'three');
          const rival = rivalOf(direct(rig), kind, 'three');
          await client.runInContext(async () => {
            const leases: Lease[] = [];
            for (let i = 0; i < 3; i += 1) leases.push(await lock.acquire({ leaseTime: LEASE_MS }));
            const [a, b, kept] = leases as [Lease, Lease, Lease];
            // Both releases run in Redis; their replies never come back.
            rig.proxy.swallowReplies(2, { thenBlackhole: loss.thenBlackhole });
            const failed = await Promise.all([outcome(a.release()), outcome(b.release())]);
            expect(failed[0]).toBeInstanceOf(LockRedisError);
            expect(failed[1]).toBeInstanceOf(LockRedisError);
            // The user retries both at once; then the connection heals (if silent).
            const retried = Promise.all([outcome(a.release()), outcome(b.release())]);
            rig.proxy.heal();
            expect(await retried, 'each release was applied: its retry resolves').toEqual(['resolved', 'resolved']);
            expect(await lock.getHoldCount(), 'each release applied once').toBe(1);
            expect(await rival.tryLock(0, LEASE_MS), 'a rival gets in while a Lease is live').toBe(false);
            expect(kept.signal.aborted).toBe(false);
            await kept.release();
          });
          expect(lost).toEqual([]);
          expect(await rival.tryLock(0, LEASE_MS)).toBe(true);
        });
      }
    });
  }
});
