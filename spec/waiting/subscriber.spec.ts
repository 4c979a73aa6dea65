import { IoRedisPubSub, type IoRedisLike } from '../../lib/redis/ioredis-adapter.js';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { NoticeSubscriber } from '../../lib/waiting/notice-subscriber.js';
import { redisPortOf } from '../../lib/redis/detect.js';
import { ping } from '../helpers/clients.js';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

describe('NoticeSubscriber', () => {
  const fx = useLockFixture();

  it('a channel subscribed while the connection is still in its handshake receives notices', async () => {
    const publisher = fx.redis();
    const errors: unknown[] = [];
    for (let trial = 0; trial < 5; trial += 1) {
      // 'connect': the socket is open and ioredis is still sending its handshake and ready check.
      const conn = new Redis(fx.url);
      const subscriber = new NoticeSubscriber((error) => errors.push(error));
      subscriber.attach(new IoRedisPubSub(conn as unknown as IoRedisLike, true, false));
      await once(conn, 'connect');
      let notices = 0;
      const channel = `${fx.prefix}:wake:${trial}`;
      await subscriber.subscribe(channel, { notify: () => (notices += 1), resync: () => undefined });
      for (let i = 0; i < 40 && notices === 0; i += 1) {
        await publisher.publish(channel, '1');
        await sleep(10);
      }
      await subscriber.close();
      expect({ trial, notices: notices > 0 }).toEqual({ trial, notices: true });
    }
    expect(errors).toEqual([]);
  });

  // node-redis never answers a SUBSCRIBE on a closed client: a wait subscribing then would hang.
  it('a subscribe on rlock\'s own connection after close() rejects, on the client under test', async () => {
    const connection = fx.lockConnection();
    await ping(connection);
    const subscriber = new NoticeSubscriber(() => undefined);
    subscriber.attach(redisPortOf(connection, 'connection').openPubSub(false));
    const listener = { notify: () => undefined, resync: () => undefined };
    await subscriber.subscribe(`${fx.prefix}:wake:open`, listener);
    const closing = subscriber.close();
    const during = subscriber.subscribe(`${fx.prefix}:wake:during`, listener);
    await closing;
    const after = subscriber.subscribe(`${fx.prefix}:wake:after`, listener);
    const outcome = (call: Promise<void>): Promise<string> =>
      Promise.race([call.then(() => 'resolved', () => 'rejected'), sleep(3_000).then(() => 'hung')]);
    expect({ during: await outcome(during), after: await outcome(after) }).toEqual({ during: 'rejected', after: 'rejected' });
  });
});
