import { describe, expect, it } from 'vitest';
import { LockClient } from '../../lib/index.js';
import { sleep, until } from '../helpers/fixtures.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// The proxy lets Redis run a call, swallows its reply and resets the socket: ioredis resends it
// (and rlock's node-redis adapter does, for its own calls).
describe('semaphore and latch: every changing call is applied once under resend', () => {
  const rig = useFaultRig();
  const proxied = async (): Promise<LockClient> => {
    const redis = rig.lockConnect('proxy');
    await ping(redis);
    return rig.client(redis);
  };
  const permitsKey = (name: string): string => `${rig.key(name)}:semaphore`;

  for (const fair of [false, true]) {
    it(`an acquisition counts once, a release too${fair ? ' (fair)' : ''}`, async () => {
      const client = await proxied();
      const sem = client.getSemaphore('s', { permits: 3, fair });
      rig.proxy.swallowReplies(1);
      const permit = await sem.acquire({ permits: 2 });
      expect(await sem.availablePermits()).toBe(1);
      expect(await rig.admin.zscore(permitsKey('s'), '#')).toBe('2');
      const other = await rig.client(rig.lockConnect('direct')).getSemaphore('s', { permits: 3 }).acquire();
      rig.proxy.swallowReplies(1);
      await permit.release();
      await permit.release();
      expect(await sem.availablePermits()).toBe(2);
      await other.release();
      expect(await rig.admin.exists(permitsKey('s'))).toBe(0);
    });
  }

  it("a fair waiter's first attempt, resent, keeps its place in the queue", async () => {
    const sem = (client: LockClient) => client.getSemaphore('q', { permits: 1, fair: true });
    const held = await sem(rig.client(rig.lockConnect('direct'))).acquire({ leaseTime: 30_000 });
    const order: string[] = [];
    const take = (who: string, client: LockClient): Promise<void> =>
      sem(client)
        .acquire({ waitTime: 20_000 })
        .then(async (permit) => {
          order.push(who);
          await permit.release();
        });
    const client = await proxied();
    // The first attempt queues the waiter; its reply is lost and it is resent after another queued.
    rig.proxy.swallowReplies(1, { thenBlackhole: true });
    const first = take('first', client);
    await until(() => rig.proxy.blackholed);
    const second = take('second', rig.client(rig.lockConnect('direct')));
    await until(async () => (await rig.admin.zcard(`${rig.key('q')}:semaphore:queue`)) === 2);
    rig.proxy.heal();
    await sleep(500);
    await held.release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
  });

  it('latch: trySetCount and countDown count once', async () => {
    const client = await proxied();
    const latch = client.getCountDownLatch('l');
    rig.proxy.swallowReplies(1);
    expect(await latch.trySetCount(3)).toBe(true);
    rig.proxy.swallowReplies(1);
    expect(await latch.countDown()).toBe(2);
    expect(await latch.getCount()).toBe(2);
    expect(await latch.countDown()).toBe(1);
    rig.proxy.swallowReplies(1);
    expect(await latch.countDown()).toBe(0);
    expect(await rig.admin.exists(`${rig.key('l')}:latch`)).toBe(0);
  });

  it('a resent trySetCount does not set a latch again after it reached 0', async () => {
    const client = await proxied();
    rig.proxy.swallowReplies(1, { thenBlackhole: true });
    const set = client.getCountDownLatch('l').trySetCount(1);
    await until(() => rig.proxy.blackholed);
    const other = rig.client(rig.lockConnect('direct')).getCountDownLatch('l');
    expect(await other.getCount()).toBe(1);
    expect(await other.countDown()).toBe(0);
    rig.proxy.heal();
    expect(await set).toBe(true);
    expect(await other.getCount()).toBe(0);
  });
});
