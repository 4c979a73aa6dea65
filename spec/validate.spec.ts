import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, LockClient, MultiLock, type RLock } from '../lib/index.js';

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
    expect(() => locks.getReadWriteLock(name as string)).toThrow(/`name`/);
    expect(() => locks.getFencedLock(name as string)).toThrow(InvalidArgumentError);
  });

  // Every lock kind checks its arguments the same way.
  const kinds: [string, () => RLock][] = [
    ['getLock', () => lockOf()],
    ['readLock', () => new LockClient(lazy(), { subscriber: lazy() }).getReadWriteLock('ok').readLock()],
    ['writeLock', () => new LockClient(lazy(), { subscriber: lazy() }).getReadWriteLock('ok').writeLock()],
    ['getFencedLock', () => new LockClient(lazy(), { subscriber: lazy() }).getFencedLock('ok')],
    ['getFairLock', () => new LockClient(lazy(), { subscriber: lazy() }).getFairLock('ok')],
    ['MultiLock', () => {
      const locks = new LockClient(lazy(), { subscriber: lazy() });
      return new MultiLock(locks.getLock('a'), locks.getReadWriteLock('b').readLock());
    }],
  ];
  it.each(kinds)('%s: bad times, signal, fn and options', async (_, make) => {
    const lock = make();
    await expect(lock.tryLock(-1)).rejects.toThrow(/`waitTime`/);
    await expect(lock.tryLock({ waitTime: Number.NaN })).rejects.toThrow(InvalidArgumentError);
    await expect(lock.tryLock(0, 0)).rejects.toThrow(/`leaseTime`/);
    await expect(lock.lock(2 ** 31)).rejects.toThrow(/`leaseTime`/);
    await expect(lock.acquire({ leaseTime: '5' as never })).rejects.toThrow(InvalidArgumentError);
    await expect(lock.withLock(() => 1, { waitTime: Infinity })).rejects.toThrow(InvalidArgumentError);
    await expect(lock.withLock('fn' as never)).rejects.toThrow(/`fn`/);
    await expect(lock.tryLock(10, 10_000, { signal: 'x' as never })).rejects.toThrow(/`signal`/);
    await expect(lock.lock(undefined, 'x' as never)).rejects.toThrow(/`options`/);
  });

  it('fenced lock: bad times in lockAndGetToken and tryLockAndGetToken', async () => {
    const lock = new LockClient(lazy(), { subscriber: lazy() }).getFencedLock('ok');
    await expect(lock.lockAndGetToken(0)).rejects.toThrow(/`leaseTime`/);
    await expect(lock.lockAndGetToken(-5)).rejects.toThrow(InvalidArgumentError);
    await expect(lock.tryLockAndGetToken(-1)).rejects.toThrow(/`waitTime`/);
    await expect(lock.tryLockAndGetToken(0, Number.NaN)).rejects.toThrow(/`leaseTime`/);
    await expect(lock.tryLockAndGetToken({ waitTime: '1' as never })).rejects.toThrow(InvalidArgumentError);
    await expect(lock.tryLockAndGetToken(1, 10_000, { signal: {} as never })).rejects.toThrow(/`signal`/);
  });

  it('MultiLock: no lock, a value that is not an rlock lock, the same lock twice', () => {
    const locks = new LockClient(lazy(), { subscriber: lazy() });
    const shared = lazy();
    const sameConnection = new LockClient(shared, { subscriber: lazy() });
    const alsoSameConnection = new LockClient(shared, { subscriber: lazy() });
    const rw = locks.getReadWriteLock('rw');
    expect(() => new MultiLock()).toThrow(/at least one lock/);
    expect(() => new MultiLock(locks.getLock('a'), {} as RLock)).toThrow(/lock #2 of a MultiLock/);
    expect(() => new MultiLock(null as never)).toThrow(InvalidArgumentError);
    const nested = new MultiLock(locks.getLock('a'));
    expect(() => new MultiLock(nested)).toThrow(/got a MultiLock/);
    const a = locks.getLock('a');
    expect(() => new MultiLock(a, locks.getLock('b'), a)).toThrow(/#1 and #3 .* the same lock "a"/);
    expect(() => new MultiLock(locks.getLock('a'), locks.getLock('a'))).toThrow(InvalidArgumentError);
    // Both sides of one read-write lock, or one key through two clients on one connection.
    expect(() => new MultiLock(rw.readLock(), rw.writeLock())).toThrow(/same lock "rw"/);
    expect(() => new MultiLock(sameConnection.getLock('k'), alsoSameConnection.getLock('k'))).toThrow(InvalidArgumentError);
    // Different keys, or the same name on separate connections, are fine.
    expect(new MultiLock(locks.getLock('a'), locks.getFencedLock('b'), rw.writeLock()).name).toBe('MultiLock(a, b, rw)');
    expect(() => new MultiLock(locks.getLock('k'), sameConnection.getLock('k'))).not.toThrow();
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

  it.each([...badTimes.filter((t) => t !== -1), 0, -2, 1, 49])('leaseTime %s', async (lease) => {
    const lock = lockOf();
    await expect(lock.lock(lease as number)).rejects.toThrow(/`leaseTime`/);
    await expect(lock.tryLock(0, lease as number)).rejects.toThrow(InvalidArgumentError);
    await expect(lock.acquire({ leaseTime: lease as number })).rejects.toThrow(InvalidArgumentError);
    await expect(fairLockOf().lock(lease as number)).rejects.toThrow(/`leaseTime`/);
  });

  it('signal, fn and options of the wrong type', async () => {
    const lock = lockOf();
    await expect(lock.tryLock(10, 10_000, { signal: 'x' as unknown as AbortSignal })).rejects.toThrow(/`signal`/);
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
    // Shorter than the holder's clock margin, a lease could never be held.
    expect(make({ watchdogTimeout: 49 })).toThrow(/`watchdogTimeout` must be at least 50 ms/);
    expect(make({ watchdogTimeout: 50 })).not.toThrow();
    expect(make({ fairLockWaitTimeout: 0 })).toThrow(/`fairLockWaitTimeout`/);
    expect(make({ fairLockWaitTimeout: -1 })).toThrow(/`fairLockWaitTimeout`/);
    expect(make({ fairLockWaitTimeout: Number.POSITIVE_INFINITY })).toThrow(InvalidArgumentError);
    expect(make({ fairLockWaitTimeout: '5000' })).toThrow(/`fairLockWaitTimeout`/);
    expect(make({ subscriber: {} })).toThrow(/`subscriber`/);
    expect(make({ watchdogTimout: 100 })).toThrow(/unknown option `watchdogTimout`/);
    expect(make({ syncReplicas: 1 })).toThrow(/`syncReplicas`/);
    expect(make({ syncReplicas: { replicas: 0, timeout: 100 } })).toThrow(/`syncReplicas.replicas`/);
    expect(make({ syncReplicas: { replicas: 1.5, timeout: 100 } })).toThrow(/`syncReplicas.replicas`/);
    expect(make({ syncReplicas: { replicas: 1, timeout: -1 } })).toThrow(/`syncReplicas.timeout`/);
    expect(make({ syncReplicas: { replicas: 1 } })).toThrow(/`syncReplicas.timeout`/);
    expect(make({ pubsub: 'fast' })).toThrow(/`pubsub` must be one of 'auto', 'sharded', 'classic'/);
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
