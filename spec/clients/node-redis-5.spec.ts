import { createClient as createClient6, createCluster as createCluster6, createSentinel as createSentinel6 } from 'redis';
import { createClient, createClientPool, createCluster, createSentinel } from 'redis-v5';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient, type RedisConnection } from '../../lib/index.js';
import { useLockFixture } from '../helpers/fixtures.js';

// node-redis 5 can hand a command another command's reply after a reconnect: rlock refuses it,
// whichever kind of object, open or not, and tells the user which version to use instead.

const V5_REFUSED = /node-redis 5 .*is not supported, because after a reconnect it can hand a command another command's reply; use redis \^6 \(@redis\/client \^6\)/;

const refusal = (make: () => unknown): unknown => {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('node-redis 5 is refused by the constructor, naming node-redis 6', () => {
  const fx = useLockFixture();
  const quiet = <T extends { on(event: 'error', listener: () => void): unknown }>(conn: T): T => {
    conn.on('error', () => undefined);
    return conn;
  };

  it('a connected node-redis 5.12 client, as the connection and as the subscriber', async () => {
    const v5 = await quiet(createClient({ url: fx.url, RESP: 2 })).connect();
    const v6 = await quiet(createClient6({ url: fx.url, RESP: 2 })).connect();
    try {
      // It really is open and answers: the refusal is about its version, not its state.
      expect(await v5.ping()).toBe('PONG');
      const error = refusal(() => new LockClient(v5));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(V5_REFUSED);
      expect((error as Error).message).toMatch(/^`redis` /);
      expect(() => new LockClient(v6 as unknown as RedisConnection, { subscriber: v5 as unknown as RedisConnection })).toThrow(
        /^`subscriber` is a node-redis 5 .*use redis \^6/,
      );
      // Its RESP3 client too.
      const resp3 = await quiet(createClient({ url: fx.url, RESP: 3 })).connect();
      expect(() => new LockClient(resp3 as unknown as RedisConnection)).toThrow(V5_REFUSED);
      resp3.destroy();
    } finally {
      v5.destroy();
      v6.destroy();
    }
  });

  it('its Cluster, Sentinel and pool objects, before anything else about them (not connected: the version decides)', () => {
    const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] });
    const sentinel = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 1 }] });
    const client = createClient({ url: 'redis://127.0.0.1:1' });
    for (const conn of [cluster, sentinel, client, createClientPool({ url: 'redis://127.0.0.1:1' })]) {
      const error = refusal(() => new LockClient(conn as unknown as RedisConnection));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(V5_REFUSED);
    }
    // node-redis 6 objects in the same state are not taken for 5: only "not open yet" is said.
    const v6 = [
      createCluster6({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }),
      createSentinel6({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 1 }] }),
      createClient6({ url: 'redis://127.0.0.1:1' }),
    ];
    for (const conn of v6) expect(() => new LockClient(conn as unknown as RedisConnection)).toThrow(/is a node-redis client that is not open yet/);
  });
});
