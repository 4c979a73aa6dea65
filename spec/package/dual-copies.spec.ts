import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CJS_BUILD, ESM_BUILD, ensureBuild } from '../helpers/built-package.js';
import { useLockFixture } from '../helpers/fixtures.js';

type Rlock = typeof import('../../lib/index.js');

// An ESM application whose dependencies load rlock through require() gets both builds in one
// process: the two copies must agree on errors, lock contexts and composite locks.
describe('the ESM and the CJS build loaded in one process', () => {
  const fx = useLockFixture();
  let esm: Rlock;
  let cjs: Rlock;

  beforeAll(async () => {
    await ensureBuild();
    cjs = createRequire(import.meta.url)(CJS_BUILD) as Rlock;
    esm = (await import(/* @vite-ignore */ pathToFileURL(ESM_BUILD).href)) as Rlock;
  }, 120_000);

  const clients = (): { esmClient: InstanceType<Rlock['LockClient']>; cjsClient: InstanceType<Rlock['LockClient']> } => ({
    esmClient: fx.track(new esm.LockClient(fx.redis(), { keyPrefix: fx.prefix })),
    cjsClient: fx.track(new cjs.LockClient(fx.redis(), { keyPrefix: fx.prefix })),
  });

  it('are two copies (else this spec would prove nothing)', () => {
    expect(esm.LockClient).not.toBe(cjs.LockClient);
    expect(esm.LockError).not.toBe(cjs.LockError);
  });

  it('instanceof works across copies, for each error class and its base class only', async () => {
    const fromCjs = new cjs.LockNotHeldError('not held', { lockName: 'x' });
    expect(fromCjs).toBeInstanceOf(esm.LockNotHeldError);
    expect(fromCjs).toBeInstanceOf(esm.LockError);
    expect(fromCjs).not.toBeInstanceOf(esm.LockLostError);
    expect(new esm.LockLostError('lost', 'expired')).toBeInstanceOf(cjs.LockLostError);
    expect(new esm.RedLockQuorumError({ operation: 'acquire', nodes: 3, quorum: 2, granted: 1, refused: 2, failures: [], unanswered: 0, elapsedMs: 1, attempts: 1 }))
      .toBeInstanceOf(cjs.RedLockQuorumError);
    expect(new Error('plain')).not.toBeInstanceOf(esm.LockError);
    expect({ name: 'LockNotHeldError', code: 'LOCK_NOT_HELD' }).not.toBeInstanceOf(esm.LockNotHeldError);
    // A subclass of one copy's error is an instance of the other copy's class it extends.
    class AppError extends cjs.LockAcquireTimeoutError {}
    expect(new AppError('late', 10)).toBeInstanceOf(esm.LockAcquireTimeoutError);
    expect(new AppError('late', 10)).toBeInstanceOf(esm.LockError);
    expect(esm.isLockError(fromCjs)).toBe(true);

    // An error thrown by a lock of one copy, caught with the other's class.
    const { esmClient } = clients();
    const error: unknown = await esmClient.getLock('nobody').unlock().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(cjs.LockNotHeldError);
    expect(error).toBeInstanceOf(cjs.LockError);
  });

  it("a context entered through one copy is the other copy's context, and context ids never collide", async () => {
    const { esmClient, cjsClient } = clients();
    const lock = cjsClient.getLock('ctx');
    // ESM's runInContext: the CJS lock sees the context, so the second call re-enters.
    await esmClient.runInContext(async () => {
      expect(await lock.tryLock()).toBe(true);
      expect(await lock.tryLock()).toBe(true);
      expect(await lock.getHoldCount()).toBe(2);
      // A context of the CJS copy is another owner: it must not re-enter the ESM context's hold.
      expect(await cjsClient.runInContext(() => lock.tryLock())).toBe(false);
      await lock.unlock();
      await lock.unlock();
    });
    expect(await lock.isLocked()).toBe(false);

    // withLock of one copy runs its callback in a context the other copy's locks re-enter.
    const esmLock = esmClient.getLock('ctx-2');
    const cjsLock = cjsClient.getLock('ctx-3');
    await esmLock.withLock(async () => {
      await cjsLock.withLock(async () => {
        expect(await cjsLock.tryLock()).toBe(true);
        expect(await cjsLock.getHoldCount()).toBe(2);
        await cjsLock.unlock();
      });
    });
    expect(await cjsLock.isLocked()).toBe(false);
  });

  it('a MultiLock of one copy takes the locks of both', async () => {
    const { esmClient, cjsClient } = clients();
    const multi = new esm.MultiLock(esmClient.getLock('m-a'), cjsClient.getLock('m-b'), cjsClient.getFencedLock('m-c'));
    expect(await multi.tryLock(1_000, 10_000)).toBe(true);
    expect(await esmClient.getLock('m-a').isLocked()).toBe(true);
    expect(await cjsClient.getLock('m-b').isLocked()).toBe(true);
    await multi.unlock();
    expect(await fx.keys()).toEqual(expect.not.arrayContaining([`{${fx.prefix}:m-a}`, `{${fx.prefix}:m-b}`]));

    const other = new cjs.MultiLock(esmClient.getLock('n-a'), cjsClient.getLock('n-b'));
    const held = await other.withLock(async (lease) => {
      expect(lease.signal.aborted).toBe(false);
      // Inside withLock the callback's context is shared: the members re-enter.
      expect(await esmClient.getLock('n-a').getHoldCount()).toBe(1);
      return other.isHeldByCurrentOwner();
    });
    expect(held).toBe(true);
    expect(await esmClient.getLock('n-a').isLocked()).toBe(false);
    // The same lock given twice through the two copies is still caught.
    expect(() => new esm.MultiLock(esmClient.getLock('d'), esmClient.getLock('d'))).toThrow(cjs.InvalidArgumentError);
  });

  it('a RedLock of one copy takes a lock of the other', async () => {
    const { cjsClient } = clients();
    const redLock = new esm.RedLock(cjsClient.getLock('r'));
    expect(await redLock.tryLock(500, 10_000)).toBe(true);
    expect(await cjsClient.getLock('r').isLocked()).toBe(true);
    await redLock.unlock();
    expect(await cjsClient.getLock('r').isLocked()).toBe(false);
    expect(() => new esm.RedLock({} as never)).toThrow(cjs.InvalidArgumentError);
  });
});
