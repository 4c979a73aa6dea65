import { afterEach, describe, expect, it } from 'vitest';
import { LockRedisError, type LockClient, type LockLostInfo } from '../../lib/index.js';
import { connectStandalone, ping } from '../helpers/clients.js';
import { sleep } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf } from '../helpers/lock-kinds.js';
import { scriptRefusals } from '../helpers/script-refusals.js';

// SPEC "A retried release is one call": releases refused by Redis (here NOPERM: the holder's ACL
// user loses the right to run scripts) and retried obey the same. One owner holds a lock three
// times (one context, three Leases). The first release is refused and retried in the background;
// scripting comes back and `release()` again succeeds; the second release is refused too; the
// owner re-enters with a fourth Lease while that release is still retried (an outer Lease is
// kept, so the retried release is no final one that a re-entry waits for). Each retry must send
// its own release's request: once every Lease is released, Redis counts nothing.

const NAME = 'refused';
const USER = 'holder';

/** 'resolved', or what it rejected with. */
function outcome(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('releases refused by Redis and retried: each is one call', () => {
  const rig = useFaultRig();
  const refusals = scriptRefusals(() => rig.admin, USER);
  const closes: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await refusals.allow();
    for (const close of closes.splice(0)) await close();
  });

  /** A LockClient (watchdog mode, 30 s) whose connection goes straight to Redis as USER. */
  const holder = async (): Promise<{ client: LockClient; lost: LockLostInfo[] }> => {
    await refusals.create();
    const { connection, close } = connectStandalone(refusals.url(rig.server.port), {
      glide: { credentials: { username: USER, password: `${USER}-pw` } },
    });
    closes.push(close);
    await ping(connection);
    const client = rig.client(connection);
    const lost: LockLostInfo[] = [];
    client.on('lost', (info) => lost.push(info));
    return { client, lost };
  };

  describe('refused, retried, re-entered: nothing is left held once every Lease is released', () => {
    for (const kind of KINDS) {
      it(kind, async () => {
        const { client, lost } = await holder();
        const lock = lockOf(client, kind, NAME);
        const rival = lockOf(rig.client(rig.lockConnect('direct')), kind === 'read' ? 'write' : kind, NAME);
        // The kind's scripts in Redis' cache before any refusal.
        expect(await lock.tryLock(0, 5_000)).toBe(true);
        await lock.unlock();

        await client.runInContext(async () => {
          const outer = await lock.acquire();
          const first = await lock.acquire();
          const second = await lock.acquire();
          const before = await refusals.count();
          await refusals.refuse();
          // Refused before it ran: retried in the background after 50, 100, 200, 400 ms.
          expect(await outcome(first.release())).toBeInstanceOf(LockRedisError);
          // Its third retry was refused: the next one wakes some 400 ms from now (it will find the
          // release answered and stop).
          await refusals.reach(before + 4);
          const quietFrom = performance.now();
          await refusals.allow();
          expect(await outcome(first.release()), 'release() again sends the same request, applied now').toBe('resolved');
          await refusals.refuse();
          // Refused too, and retried in the background (50, 100, 200, 400, 800 ms).
          expect(await outcome(second.release())).toBeInstanceOf(LockRedisError);
          // Past the first release's last background wake-up.
          await sleep(Math.max(0, quietFrom + 550 - performance.now()));
          // Right after one of the second release's retries was refused (the next is ≥ 400 ms
          // away), scripting comes back and the owner re-enters: a new call of the client on the
          // lock while the second release is still retried, which must not share its request.
          await refusals.reach((await refusals.count()) + 1);
          await refusals.allow();
          const again = await lock.acquire();
          expect(await rival.tryLock(0, 5_000), 'no two holders').toBe(false);
          expect(await outcome(second.release()), 'release() again sends the second release’s own request').toBe('resolved');
          expect.soft(await lock.getHoldCount(), 'the second release took its own count: the outer and the re-entered Lease hold').toBe(2);
          expect(again.signal.aborted).toBe(false);
          await again.release();
          await outer.release();
          expect.soft(await lock.getHoldCount(), 'every Lease released: the owner holds nothing').toBe(0);
        });
        expect(await rig.admin.hgetall(rig.key(NAME)), 'once every Lease is released Redis counts nothing').toEqual({});
        expect(await rival.tryLock(0, 5_000), 'a rival gets in right away').toBe(true);
        expect(lost).toEqual([]);
      });
    }
  });
});
