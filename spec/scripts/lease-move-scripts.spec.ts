import { describe, expect, it } from 'vitest';
import { fencedLockKeys, holdRecordKey, lockKeys, readWriteKeys, semaphoreKeys } from '../../lib/keys.js';
import { ScriptStatus, WaiterMode } from '../../lib/scripts/registry.js';
import type { HeldLease } from '../../lib/scripts/lease-move-scripts.js';
import type { RenewTarget } from '../../lib/scripts/script-types.js';
import { useLockFixture } from '../helpers/fixtures.js';
import { directScripts } from '../helpers/direct-scripts.js';
import { fixedRequest, requestIds } from '../helpers/request-ids.js';

// The scripts that extend, hand off and adopt a hold, called directly on holds taken by the
// acquire scripts.
describe('lease move scripts', () => {
  const fx = useLockFixture();
  const rid = requestIds();
  const setup = () => {
    const { redis, scripts } = directScripts(fx);
    const keys = lockKeys(fx.prefix, 'k');
    const target = (holder: string): RenewTarget => ({ name: 'k', script: 'lock', keys: [keys.lock], holder });
    const hold = (owner: string, leaseMs: number) => scripts.lock.acquire(keys, owner, leaseMs, '', WaiterMode.Single, rid());
    return { redis, scripts, keys, target, hold };
  };
  const asHeld = (reply: unknown): HeldLease => {
    expect(reply).toBeTypeOf('object');
    return reply as HeldLease;
  };

  it('extend: the lease ends no earlier than ms from now, never sooner; false for a non-holder', async () => {
    const { redis, scripts, keys, target, hold } = setup();
    expect(await hold('o1', 1_000)).toBeNull();
    expect(await scripts.leaseMoves.extend(target('o1'), 10_000, rid())).toBe(true);
    expect(await redis.pttl(keys.lock)).toBeGreaterThan(9_000);
    expect(await scripts.leaseMoves.extend(target('o1'), 500, rid())).toBe(true);
    expect(await redis.pttl(keys.lock)).toBeGreaterThan(9_000);
    expect(await scripts.leaseMoves.extend(target('o2'), 60_000, rid())).toBe(false);
    expect(await redis.pttl(keys.lock)).toBeLessThanOrEqual(10_000);
    expect(await redis.hexists(keys.lock, 'o2')).toBe(0);
  });

  it('extend: a resend is answered from the record, even once the hold is gone; the record has a TTL', async () => {
    const { redis, scripts, keys, target, hold } = setup();
    await hold('o1', 1_000);
    const request = fixedRequest('x-1');
    expect(await scripts.leaseMoves.extend(target('o1'), 5_000, request)).toBe(true);
    const record = holdRecordKey(keys.lock, 'x', 'o1');
    const ttl = await redis.pttl(record);
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
    await redis.del(keys.lock);
    expect(await scripts.leaseMoves.extend(target('o1'), 5_000, request)).toBe(true);
    expect(await redis.exists(keys.lock)).toBe(0);
    expect(await scripts.leaseMoves.extend(target('o1'), 5_000, rid())).toBe(false);
  });

  it('handOff: sets the lease to exactly the gap, opens one claim; a non-holder is NotHeld', async () => {
    const { redis, scripts, keys, target, hold } = setup();
    await hold('o1', 30_000);
    const held = asHeld(await scripts.leaseMoves.handOff(target('o1'), 2_000, 'h1'));
    expect(held.count).toBe(1);
    expect(held.leftMs).toBeGreaterThan(1_500);
    expect(held.leftMs).toBeLessThanOrEqual(2_000);
    expect(held.token).toBeUndefined();
    expect(await redis.pttl(keys.lock)).toBeLessThanOrEqual(2_000);
    const claim = holdRecordKey(keys.lock, 'h', 'o1');
    expect(await redis.get(claim)).toBe('open:h1');
    expect(await redis.pttl(claim)).toBeLessThanOrEqual(2_000);
    // A resend of the same hand-off changes nothing more.
    expect(asHeld(await scripts.leaseMoves.handOff(target('o1'), 2_000, 'h1')).count).toBe(1);
    expect(await scripts.leaseMoves.handOff(target('o2'), 2_000, 'h2')).toBe(ScriptStatus.NotHeld);
    expect(await redis.exists(holdRecordKey(keys.lock, 'h', 'o2'))).toBe(0);
  });

  it('adopt: of two adopters exactly one gets the hold; the winner resent is answered again', async () => {
    const { redis, scripts, keys, target, hold } = setup();
    await hold('o1', 30_000);
    await scripts.leaseMoves.handOff(target('o1'), 2_000, 'h1');
    expect(await scripts.leaseMoves.adopt(target('o1'), 10_000, 'wrong', rid())).toBe(ScriptStatus.NotHeld);
    const winner = fixedRequest('adopt-a');
    const adopted = asHeld(await scripts.leaseMoves.adopt(target('o1'), 10_000, 'h1', winner));
    expect(adopted.count).toBe(1);
    expect(adopted.leftMs).toBeGreaterThan(9_000);
    expect(await scripts.leaseMoves.adopt(target('o1'), 10_000, 'h1', fixedRequest('adopt-b'))).toBe(ScriptStatus.NotHeld);
    expect(asHeld(await scripts.leaseMoves.adopt(target('o1'), 10_000, 'h1', winner)).count).toBe(1);
    expect(await redis.get(holdRecordKey(keys.lock, 'h', 'o1'))).toBe('adopted:h1:adopt-a');
    expect(await redis.pttl(holdRecordKey(keys.lock, 'h', 'o1'))).toBeGreaterThan(0);
    expect(await redis.hexists(keys.lock, 'log:o1')).toBe(0);
  });

  it('adopt: a later hand-off replaces the older handle; an ended hold is NotHeld', async () => {
    const { redis, scripts, keys, target, hold } = setup();
    await hold('o1', 30_000);
    await scripts.leaseMoves.handOff(target('o1'), 5_000, 'h1');
    await scripts.leaseMoves.handOff(target('o1'), 5_000, 'h2');
    expect(await scripts.leaseMoves.adopt(target('o1'), 0, 'h1', rid())).toBe(ScriptStatus.NotHeld);
    // A fixed lease (0) is kept as it is.
    const held = asHeld(await scripts.leaseMoves.adopt(target('o1'), 0, 'h2', rid()));
    expect(held.leftMs).toBeLessThanOrEqual(5_000);
    await scripts.leaseMoves.handOff(target('o1'), 5_000, 'h3');
    await redis.del(keys.lock);
    expect(await scripts.leaseMoves.adopt(target('o1'), 10_000, 'h3', rid())).toBe(ScriptStatus.NotHeld);
    expect(await redis.exists(keys.lock)).toBe(0);
  });

  it('handOff: a fenced lock reports its token; a permit moves only its own lease', async () => {
    const { redis, scripts } = setup();
    const fenced = fencedLockKeys(fx.prefix, 'f');
    expect(await scripts.lock.fencedAcquire(fenced, 'o1', 30_000, '', WaiterMode.Single, rid())).toEqual({ token: 1 });
    const lockTarget: RenewTarget = { name: 'f', script: 'lock', keys: [fenced.lock], holder: 'o1' };
    expect(asHeld(await scripts.leaseMoves.handOff(lockTarget, 2_000, 'h1')).token).toBe(1);
    const sem = semaphoreKeys(fx.prefix, 's');
    const single = { mode: '0', hint: '1,1', othersHint: '', promised: 0 };
    await scripts.synchronizers.acquire(sem, '1:a', 2, 30_000, 'c', single, 'publish');
    await scripts.synchronizers.acquire(sem, '1:b', 2, 30_000, 'c', single, 'publish');
    const permit: RenewTarget = { name: 's', script: 'permit', keys: [sem.permits], holder: '1:a' };
    const held = asHeld(await scripts.leaseMoves.handOff(permit, 2_000, 'h1'));
    expect(held).toMatchObject({ count: 1, token: undefined });
    expect(held.leftMs).toBeLessThanOrEqual(2_000);
    const ends = Number(await redis.zscore(sem.permits, '1:b')) - Number(await redis.zscore(sem.permits, '1:a'));
    expect(ends).toBeGreaterThan(27_000);
    expect(await redis.pttl(sem.permits)).toBeGreaterThan(27_000);
  });

  it('handOff of one side of a read-write lock whose owner holds the other: OtherSideHeld, nothing opened', async () => {
    const { redis, scripts } = setup();
    const rw = readWriteKeys(fx.prefix, 'rw');
    expect(await scripts.readWrite.writeAcquire(rw, 'o1', 30_000, '', WaiterMode.Single, rid())).toBeNull();
    expect(await scripts.readWrite.readAcquire(rw, 'o1', 30_000, '', WaiterMode.Single, rid())).toBeNull();
    const read: RenewTarget = { name: 'rw', script: 'readWrite', keys: [rw.lock, rw.readers], holder: 'r:o1' };
    const write: RenewTarget = { ...read, holder: 'w:o1' };
    expect(await scripts.leaseMoves.handOff(read, 2_000, 'h1')).toBe(ScriptStatus.OtherSideHeld);
    expect(await scripts.leaseMoves.handOff(write, 2_000, 'h2')).toBe(ScriptStatus.OtherSideHeld);
    expect(await redis.exists(holdRecordKey(rw.lock, 'h', 'r:o1'), holdRecordKey(rw.lock, 'h', 'w:o1'))).toBe(0);
    expect(await redis.pttl(rw.lock)).toBeGreaterThan(27_000);
  });
});
