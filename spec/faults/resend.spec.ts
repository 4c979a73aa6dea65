import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockClient, LockNotHeldError, RedLock, type RedisConnection } from '../../lib/index.js';
import { spawnRedis } from '../../tools/redis-server.js';
import { sleep, until } from '../helpers/fixtures.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { KINDS, lockOf } from '../helpers/lock-kinds.js';

// ioredis resends every call still unanswered when its connection drops (rlock's node-redis
// adapter does the same for its own calls). The proxy lets Redis
// run a call, swallows the reply and resets the socket: the resend must not count twice.


describe('resend: every changing call is applied once', () => {
  const rig = useFaultRig();

  /** A client whose command connection crosses the proxy, ready for the proxy to be armed. */
  const proxied = async (): Promise<{ client: LockClient; redis: RedisConnection }> => {
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    return { client: rig.client(redis), redis };
  };
  const direct = (): LockClient => rig.client(rig.lockConnect('direct'));
  /** The lock's keys that exist on the server (a read-write lock also has its readers set). */
  const lockKeysLeft = async (name: string): Promise<number> => rig.admin.exists(rig.key(name), `${rig.key(name)}:readers`);

  describe('an acquisition counts once', () => {
    for (const kind of KINDS) {
      for (const mode of ['watchdog', 'lease'] as const) {
        it(`${kind}, ${mode === 'watchdog' ? 'lock() in watchdog mode' : 'tryLock(0, 10 s)'}`, async () => {
          const { client } = await proxied();
          const lock = lockOf(client, kind, 'acq');
          rig.proxy.swallowReplies(1);
          let token: number | null = null;
          if (kind === 'fenced') {
            const fenced = client.getFencedLock('acq');
            token = mode === 'watchdog' ? await fenced.lockAndGetToken() : await fenced.tryLockAndGetToken(0, 10_000);
            expect(token).not.toBeNull();
          } else if (mode === 'watchdog') {
            await lock.lock();
          } else {
            expect(await lock.tryLock(0, 10_000)).toBe(true);
          }
          if (kind === 'fenced') expect(String(token)).toBe(await rig.admin.hget(rig.key('acq'), 'token'));
          expect(await lock.getHoldCount()).toBe(1);
          await lock.unlock();
          expect(await lock.isLocked()).toBe(false);
          expect(await lockKeysLeft('acq')).toBe(0);
        });
      }
    }

    it('RedLock over 3 servers, one node behind the proxy', async () => {
      const others = [await spawnRedis(), await spawnRedis()];
      const connections: Redis[] = [];
      const clients: LockClient[] = [];
      try {
        const { client, redis } = await proxied();
        for (const server of others) {
          const conn = new Redis(server.url);
          connections.push(conn);
          clients.push(new LockClient(conn, { keyPrefix: rig.prefix }));
        }
        const redLock = new RedLock(client.getLock('red'), ...clients.map((c) => c.getLock('red')), { nodeTimeout: 1_000 });
        rig.proxy.swallowReplies(1);
        await redLock.lock();
        // The resend went before this PING on the proxied connection: its answer is in. (On
        // node-redis a PING caught by the reset itself fails: it is asked again.)
        await until(() => ping(redis).then(() => true, () => false), 5_000);
        await redLock.unlock();
        // unlock() resolves once a majority confirmed; the proxied node's release may still be on its way.
        const left = async (): Promise<number[]> => [
          await rig.admin.exists(rig.key('red')),
          ...(await Promise.all(connections.map((c) => c.exists(rig.key('red'))))),
        ];
        await until(async () => (await left()).every((n) => n === 0), 2_000).catch(() => undefined);
        expect(await left()).toEqual([0, 0, 0]);
      } finally {
        for (const c of clients) await c.close();
        for (const conn of connections) conn.disconnect();
        for (const server of others) await server.stop();
      }
    });
  });

  describe('a resent forceUnlock() does not delete the next holder’s lock', () => {
    for (const kind of ['lock', 'fair', 'write'] as const) {
      it(kind, async () => {
        const first = lockOf(direct(), kind, 'force');
        await first.lock(30_000);
        const { client } = await proxied();
        // Redis runs the force-unlock; its reply is lost and the resend is held back.
        rig.proxy.swallowReplies(1, { thenBlackhole: true });
        const forced = lockOf(client, kind, 'force').forceUnlock();
        await until(() => rig.proxy.blackholed);
        expect(await lockKeysLeft('force')).toBe(0);

        const next = lockOf(direct(), kind, 'force');
        expect(await next.tryLock(0, 30_000)).toBe(true);
        await sleep(200); // ioredis has reconnected; its resend waits in the blackhole
        rig.proxy.heal();
        expect(await forced).toBe(true);

        expect(await next.isHeldByCurrentOwner()).toBe(true);
        expect(await rig.admin.exists(rig.key('force'))).toBe(1);
        await next.unlock();
      });
    }
  });

  describe('a resent final release', () => {
    it('resolves, and the lock is free (the release ran before the reset)', async () => {
      const { client } = await proxied();
      const lock = client.getLock('final');
      await lock.lock();
      rig.proxy.swallowReplies(1);
      await lock.unlock();
      expect(await lock.isLocked()).toBe(false);
      expect(await rig.admin.exists(rig.key('final'))).toBe(0);
    });

    it('of a re-entered lock releases one hold only', async () => {
      const { client } = await proxied();
      const lock = client.getLock('twice');
      await client.runInContext(async () => {
        await lock.lock();
        await lock.lock();
        rig.proxy.swallowReplies(1);
        await lock.unlock();
        expect(await lock.getHoldCount()).toBe(1);
        await lock.unlock();
      });
      expect(await rig.admin.exists(rig.key('twice'))).toBe(0);
    });

    it('rejects with LockNotHeldError when the lock was really lost and taken meanwhile', async () => {
      const { client } = await proxied();
      const lock = client.getLock('lost');
      await lock.lock(800);
      rig.proxy.blackhole();
      // The lease runs out while the holder hears nothing; a rival takes the lock.
      const rival = direct().getLock('lost');
      expect(await rival.tryLock(5_000, 30_000)).toBe(true);
      const unlocked = lock.unlock().then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await sleep(100);
      rig.proxy.resetAll();
      rig.proxy.heal();
      expect(await unlocked).toBeInstanceOf(LockNotHeldError);
      expect(await rival.isHeldByCurrentOwner()).toBe(true);
    });
  });
});
