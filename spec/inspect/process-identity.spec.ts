import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient } from '../../lib/index.js';
import { until, useLockFixture } from '../helpers/fixtures.js';

describe('process identity: who holds and who waits', () => {
  const fx = useLockFixture();
  const identityKeys = async (): Promise<string[]> => {
    const redis = fx.redis();
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `{${fx.prefix}:}:client:*`, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
    return found.sort();
  };
  const me = { host: hostname(), pid: process.pid };

  it('inspect() gives each holder and waiter its process (host, pid, clientName); every identity key has a TTL', async () => {
    const holder = fx.client({ clientName: 'billing-worker' });
    const waiter = fx.client();
    const observer = fx.client();
    const lease = await holder.getLock('job').acquire();
    const waiting = waiter.getLock('job').tryLock(10_000);
    waiting.catch(() => undefined);
    await until(async () => (await fx.redis().zcard(`{${fx.prefix}:job}:waiters`)) === 1);

    const view = (await observer.inspect('job'))!;
    expect(view.holders).toHaveLength(1);
    expect(view.holders[0]).toMatchObject({ owner: lease.owner, process: { ...me, name: 'billing-worker' } });
    expect(typeof view.holders[0]!.process?.startedAt).toBe('number');
    expect(view.waitingClients).toHaveLength(1);
    expect(view.waitingClients[0]).toMatchObject({ clientId: waiter.id, process: me });
    expect(view.waitingClients[0]!.process).not.toHaveProperty('name');

    // One key per client that held or waited, none for the one that only looked; each expires.
    const keys = await identityKeys();
    expect(keys).toEqual([`{${fx.prefix}:}:client:${holder.id}`, `{${fx.prefix}:}:client:${waiter.id}`].sort());
    for (const key of keys) {
      const ttl = await fx.redis().pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(120_000);
    }
    await lease.release();
    expect(await waiting).toBe(true);
    await waiter.getLock('job').unlock();
  });

  it('a fair queue: each waiting call with its process; the fair lock is fair with an empty queue', async () => {
    const a = fx.client({ clientName: 'a' });
    const b = fx.client({ clientName: 'b' });
    const held = await a.getFairLock('line').acquire();
    expect((await b.inspect('line'))!.kind).toBe('fair');
    const queued = b.getFairLock('line').acquire();
    await until(async () => (await a.getFairLock('line').getQueue()).length === 1);
    const view = (await a.inspect('line'))!;
    expect(view.kind).toBe('fair');
    expect(view.holders[0]!.process).toMatchObject({ ...me, name: 'a' });
    expect(view.queue[0]!.process).toMatchObject({ ...me, name: 'b' });
    await held.release();
    await (await queued).release();
  });

  it('unknown process: a holder whose client wrote no identity (another library, an older rlock) or whose identity expired', async () => {
    const redis = fx.redis();
    await redis.hset(`{${fx.prefix}:foreign}`, 'someone-else:1', 1);
    await redis.pexpire(`{${fx.prefix}:foreign}`, 30_000);
    const locks = fx.client();
    const view = (await locks.inspect('foreign'))!;
    expect(view.holders).toEqual([expect.objectContaining({ owner: 'someone-else:1', process: null })]);

    const lease = await locks.getLock('mine').acquire();
    await until(async () => (await identityKeys()).length === 1);
    await redis.del(`{${fx.prefix}:}:client:${locks.id}`);
    expect((await locks.inspect('mine'))!.holders[0]!.process).toBeNull();
    await lease.release();
  });

  it('a client that never locks writes nothing; close() deletes the identity', async () => {
    const idle = fx.client();
    await idle.getLock('x').isLocked();
    await idle.getLock('x').getHolders();
    expect(await idle.inspect('x')).toBeUndefined();
    expect(await idle.getLock('x').tryLock()).toBe(true);
    await idle.getLock('x').unlock();
    await until(async () => (await identityKeys()).length === 1);
    await idle.close();
    expect(await identityKeys()).toEqual([]);

    const never = fx.client();
    await never.getFairLock('y').getQueue();
    await never.close();
    expect(await identityKeys()).toEqual([]);
  });

  it('clientName is checked before anything reaches Redis', async () => {
    const connection = fx.lockConnection();
    for (const clientName of ['', 'x'.repeat(129), 'line\nbreak', 42]) {
      expect(() => new LockClient(connection, { keyPrefix: fx.prefix, clientName: clientName as string }), String(clientName)).toThrow(InvalidArgumentError);
    }
    expect(() => fx.client({ clientName: 'x'.repeat(128) })).not.toThrow();
    await expect(fx.client().inspect('')).rejects.toThrow(InvalidArgumentError);
  });
});
