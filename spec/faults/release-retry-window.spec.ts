import { describe, it } from 'vitest';
import { LockRedisError, type LockClient, type LockLostInfo, type RLock } from '../../lib/index.js';
import { ping } from '../helpers/clients.js';
import { sleep } from '../helpers/fixtures.js';
import { useFaultRig, type OwnFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf, type Kind } from '../helpers/lock-kinds.js';

// A release that waits for room in the request window (SPEC: at most 64 calls of one client on
// one lock in use) gets no answer within the release timeout (5 s) and rejects; the user calls
// release() again. Both are one release (SPEC "A retried release is one call"): once the
// connection heals Redis applies it once, the retry resolves, and the calls queued behind never
// stall the client's later calls on that lock. (No permits here: a permit's release, by its id,
// takes no room in the window.) Each test spends the release timeout waiting, so the kinds run at
// once, each on a fault proxy and key prefix of its own (FaultRig.own).

/** More unanswered calls of the client on the lock than its window has room for. */
const FILLERS = 80;
/** Every hold outlives the 5 s a release waits for its answer. */
const LEASE_MS = 20_000;
/** Acquire-release cycles of the client on the lock after the retry, and the time they may take. */
const CYCLES = 40;
const CYCLES_MS = 5_000;

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

describe('a release retried while it waits for room in the request window', () => {
  const shared = useFaultRig();

  /** A client whose command connection crosses the test's proxy; `lost` events are collected. */
  const proxied = async (rig: OwnFaultRig): Promise<{ client: LockClient; lost: LockLostInfo[] }> => {
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    const client = rig.client(redis);
    const lost: LockLostInfo[] = [];
    client.on('lost', (info) => lost.push(info));
    return { client, lost };
  };
  const direct = (rig: OwnFaultRig): LockClient => rig.client(rig.lockConnect('direct'));

  /**
   * Silences the connection and fills the client's window on the lock with calls that change
   * nothing: one-shot tries of the rival side, each by an owner of its own, which fail (the lock
   * is held) once answered. Resolves with their answers (or errors), after heal.
   */
  const fillWindow = (rig: OwnFaultRig, client: LockClient, kind: Kind, name: string): Promise<unknown[]> => {
    rig.proxy.blackhole();
    const side = rivalOf(client, kind, name);
    return Promise.all(Array.from({ length: FILLERS }, () => client.runInContext(() => side.tryLock(0, LEASE_MS)).catch((error: unknown) => error)));
  };

  describe('two holds of one owner: the retry releases one, the other Lease keeps the lock', () => {
    for (const kind of KINDS) {
      it.concurrent(kind, async ({ expect, onTestFinished }) => {
        const rig = await shared.own();
        onTestFinished(() => rig.close());
        const { client, lost } = await proxied(rig);
        const lock = lockOf(client, kind, 'two');
        const rival = rivalOf(direct(rig), kind, 'two');
        await client.runInContext(async () => {
          const first = await lock.acquire({ leaseTime: LEASE_MS });
          const second = await lock.acquire({ leaseTime: LEASE_MS });
          const fillers = fillWindow(rig, client, kind, 'two');
          // Behind the fillers, unanswered: rejected at the release timeout.
          expect(await outcome(first.release())).toBeInstanceOf(LockRedisError);
          // The retry while the first try still waits for room; then the connection heals.
          const retried = outcome(first.release());
          rig.proxy.heal();
          const [answer, tries] = await Promise.all([retried, fillers]);
          expect(answer).toBe('resolved');
          expect(tries).toEqual(Array.from({ length: FILLERS }, () => false));
          expect(await lock.getHoldCount(), 'one release applied, once').toBe(1);
          expect(await rival.tryLock(0, LEASE_MS), 'a rival gets in while a Lease is live').toBe(false);
          expect(second.signal.aborted).toBe(false);
          await second.release();
        });
        expect(lost).toEqual([]);
        expect(await rival.tryLock(0, LEASE_MS)).toBe(true);
      });
    }
  });

  describe('one hold: the retry resolves, and the client goes on using the lock', () => {
    for (const kind of KINDS) {
      it.concurrent(kind, async ({ expect, onTestFinished }) => {
        const rig = await shared.own();
        onTestFinished(() => rig.close());
        const { client, lost } = await proxied(rig);
        const lock = lockOf(client, kind, 'one');
        const rival = rivalOf(direct(rig), kind, 'one');
        await client.runInContext(async () => {
          const lease = await lock.acquire({ leaseTime: LEASE_MS });
          const fillers = fillWindow(rig, client, kind, 'one');
          expect(await outcome(lease.release())).toBeInstanceOf(LockRedisError);
          const retried = outcome(lease.release());
          rig.proxy.heal();
          const [answer, tries] = await Promise.all([retried, fillers]);
          // Soft: the cycles below tell whether the window stalls, whatever the retry answered.
          expect.soft(answer, 'the release was applied: its retry is no "not held"').toBe('resolved');
          expect(tries).toEqual(Array.from({ length: FILLERS }, () => false));
        });
        // Each cycle a fresh owner of this client; a call stuck behind a request that never
        // closes would wait forever, so the cycles race a deadline.
        let done = 0;
        const cycles = async (): Promise<void> => {
          for (let i = 0; i < CYCLES; i += 1) {
            await client.runInContext(async () => {
              await lock.lock(LEASE_MS);
              await lock.unlock();
            });
            done += 1;
          }
        };
        const finished = await Promise.race([
          cycles().then(
            () => 'done',
            (error: unknown) => error,
          ),
          sleep(CYCLES_MS).then(() => `stalled after ${done} of ${CYCLES} cycles`),
        ]);
        expect(finished, `the client's later calls on the lock within ${CYCLES_MS} ms`).toBe('done');
        expect(lost).toEqual([]);
        expect(await rival.tryLock(0, LEASE_MS)).toBe(true);
      });
    }
  });
});
