import type { RedisOptions } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockRedisError, type LockClient, type LockLostInfo } from '../../lib/index.js';
import { connectStandalone, ping, TEST_CLIENT } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf } from '../helpers/lock-kinds.js';
import { scriptRefusals } from '../helpers/script-refusals.js';

// SPEC "A retried release is one call". One owner holds a lock twice (one context, two Leases).
// The first Lease's release is refused (its ACL user lost scripting) and goes on in the
// background. Scripting comes back; the second Lease's release runs and its reply is lost; the
// first release's next background retry runs after it and ends the hold. Redis applied both
// releases once each, so a resend or a `release()` again of either is answered from the record
// (never "not held"), and nothing stays held.

const NAME = 'twice';
const USER = 'holder';

/** 'resolved', or what it rejected with. */
function outcome(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

const ON_IOREDIS = TEST_CLIENT === 'ioredis' || TEST_CLIENT === 'iovalkey';

const VARIANTS: { name: string; runs: boolean; ioredis: RedisOptions }[] = [
  // ioredis' defaults and rlock's own resends (node-redis, GLIDE): the lost calls are resent in order.
  { name: 'the client resends the two calls whose replies were lost', runs: true, ioredis: {} },
  // As the review ran it: ioredis gives up on them at the reset, rlock's own retries run.
  { name: 'the lost calls fail (ioredis maxRetriesPerRequest 0) and rlock retries them', runs: ON_IOREDIS, ioredis: { maxRetriesPerRequest: 0 } },
];

describe('two releases of one owner retried out of order: each is one call', () => {
  const rig = useFaultRig();
  const refusals = scriptRefusals(() => rig.admin, USER);
  const closes: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await refusals.allow();
    for (const close of closes.splice(0)) await close();
  });

  /** A LockClient whose connection crosses the proxy as USER. */
  const holder = async (ioredis: RedisOptions): Promise<{ client: LockClient; lost: LockLostInfo[] }> => {
    await refusals.create();
    const { connection, close } = connectStandalone(refusals.url(rig.proxy.port), {
      ioredis,
      glide: { credentials: { username: USER, password: `${USER}-pw` } },
    });
    closes.push(close);
    await ping(connection);
    const client = rig.client(connection);
    const lost: LockLostInfo[] = [];
    client.on('lost', (info) => lost.push(info));
    return { client, lost };
  };

  for (const variant of VARIANTS) {
    describe.skipIf(!variant.runs)(variant.name, () => {
      for (const kind of KINDS) {
        it(kind, async () => {
          const { client, lost } = await holder(variant.ioredis);
          const lock = lockOf(client, kind, NAME);
          const rival = lockOf(rig.client(rig.lockConnect('direct')), kind === 'read' ? 'write' : kind, NAME);
          // The kind's scripts in Redis' cache: each release below is one command (no NOSCRIPT, EVAL).
          expect(await lock.tryLock(0, 5_000)).toBe(true);
          await lock.unlock();

          await client.runInContext(async () => {
            const first = await lock.acquire();
            const second = await lock.acquire();
            const before = await refusals.count();
            await refusals.refuse();
            // Refused before it ran (Redis counts 2): retried in the background after 50, 100, 200, 400 ms.
            expect(await outcome(first.release())).toBeInstanceOf(LockRedisError);
            // Its third retry was refused: the next one comes some 400 ms from now.
            await refusals.reach(before + 4);
            await refusals.allow();
            // The second release runs at once (2 → 1), the first's retry after it (1 → 0: the hold
            // ends); the proxy loses both replies, then resets the connection.
            rig.proxy.swallowReplies(2);
            let answer = await outcome(second.release());
            // A lost reply may reach the caller as a LockRedisError: the caller retries, as SPEC allows.
            if (answer instanceof LockRedisError) answer = await outcome(second.release());
            expect(answer, 'the second release was applied: its resend or retry is no "not held"').toBe('resolved');
            expect(await outcome(first.release()), 'the first release was applied too: its retry resolves').toBe('resolved');
            expect(await lock.getHoldCount()).toBe(0);
          });
          expect(await rig.admin.exists(rig.key(NAME)), 'nothing is held once both Leases are released').toBe(0);
          expect(await rival.tryLock(0, 5_000), 'a rival gets in right away').toBe(true);
          // Nothing was lost: the owner released what it held.
          expect(lost).toEqual([]);
        });
      }
    });
  }
});
