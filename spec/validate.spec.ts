import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient, type RLock } from '../lib/index.js';

// Everything here must fail before any I/O: the connections never connect (lazyConnect).
describe('bad input → InvalidArgumentError before anything reaches Redis', () => {
  const conns: Redis[] = [];
  afterEach(() => {
    for (const conn of conns) {
      expect(conn.status).toBe('wait');
      conn.disconnect();
    }
    conns.length = 0;
  });
  const lazy = (): Redis => {
    const conn = new Redis({ lazyConnect: true, port: 1 });
    conns.push(conn);
    return conn;
  };
  const lockOf = (): RLock => new LockClient(lazy(), { subscriber: lazy() }).getLock('ok');
  const fairLockOf = (): RLock => new LockClient(lazy(), { subscriber: lazy() }).getFairLock('ok');

  it.each([[''], [42], [null], [undefined], [{}], [['a']]])('lock name %j', (name) => {
    const locks = new LockClient(lazy(), { subscriber: lazy() });
    expect(() => locks.getLock(name as string)).toThrow(InvalidArgumentError);
    expect(() => locks.getFairLock(name as string)).toThrow(InvalidArgumentError);
  });

  const badTimes = [-1, -0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 31, '100', null, {}];

  it.each(badTimes)('waitTime %s', async (wait) => {
    const lock = lockOf();
    // tryLock({...}) is the options form; every other positional value must be rejected.
    if (typeof wait !== 'object' || wait === null) {
      await expect(lock.tryLock(wait as number)).rejects.toThrow(InvalidArgumentError);
    }
    await expect(lock.tryLock({ waitTime: wait as number })).rejects.toThrow(/`waitTime`/);
    await expect(lock.acquire({ waitTime: wait as number })).rejects.toThrow(InvalidArgumentError);
    await expect(lock.withLock(() => 1, { waitTime: wait as number })).rejects.toThrow(InvalidArgumentError);
    await expect(fairLockOf().tryLock({ waitTime: wait as number })).rejects.toThrow(/`waitTime`/);
  });

  it.each([...badTimes.filter((t) => t !== -1), 0, -2])('leaseTime %s', async (lease) => {
    const lock = lockOf();
    await expect(lock.lock(lease as number)).rejects.toThrow(/`leaseTime`/);
    await expect(lock.tryLock(0, lease as number)).rejects.toThrow(InvalidArgumentError);
    await expect(lock.acquire({ leaseTime: lease as number })).rejects.toThrow(InvalidArgumentError);
    await expect(fairLockOf().lock(lease as number)).rejects.toThrow(/`leaseTime`/);
  });

  it('signal, fn and options of the wrong type', async () => {
    const lock = lockOf();
    await expect(lock.tryLock(10, 10, { signal: 'x' as unknown as AbortSignal })).rejects.toThrow(/`signal`/);
    await expect(lock.lock(undefined, 'x' as never)).rejects.toThrow(/`options`/);
    await expect(lock.withLock('fn' as never)).rejects.toThrow(/`fn`/);
    await expect(lock.acquire([] as never)).rejects.toThrow(InvalidArgumentError);
  });

  it('client options', () => {
    const make = (options: unknown) => () => new LockClient(lazy(), { subscriber: lazy(), ...(options as object) });
    expect(make({ keyPrefix: '' })).toThrow(/`keyPrefix`/);
    expect(make({ keyPrefix: 'a{b' })).toThrow(/`keyPrefix`/);
    expect(make({ keyPrefix: 7 })).toThrow(InvalidArgumentError);
    expect(make({ watchdogTimeout: 0 })).toThrow(/`watchdogTimeout`/);
    expect(make({ watchdogTimeout: -5 })).toThrow(InvalidArgumentError);
    expect(make({ watchdogTimeout: Number.NaN })).toThrow(InvalidArgumentError);
    expect(make({ fairLockWaitTimeout: 0 })).toThrow(/`fairLockWaitTimeout`/);
    expect(make({ fairLockWaitTimeout: -1 })).toThrow(/`fairLockWaitTimeout`/);
    expect(make({ fairLockWaitTimeout: Number.POSITIVE_INFINITY })).toThrow(InvalidArgumentError);
    expect(make({ fairLockWaitTimeout: '5000' })).toThrow(/`fairLockWaitTimeout`/);
    expect(make({ subscriber: {} })).toThrow(/`subscriber`/);
    expect(make({ watchdogTimout: 100 })).toThrow(/unknown option `watchdogTimout`/);
    expect(() => new LockClient({} as Redis)).toThrow(/`redis`/);
    const locks = new LockClient(lazy(), { subscriber: lazy() });
    expect(() => locks.runInContext('x' as never)).toThrow(/`fn`/);
  });

  it('errors carry a literal name, a code and the lock name', async () => {
    const error = await lockOf()
      .tryLock(-1)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'InvalidArgumentError', code: 'INVALID_ARGUMENT', lockName: 'ok' });
  });
});
