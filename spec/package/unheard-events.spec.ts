import { afterEach, describe, expect, it, vi } from 'vitest';
import { sleep, useLockFixture } from '../helpers/fixtures.js';

// eventemitter3 drops an `error` nobody listens to: rlock turns the first unheard `lost` and
// `error` of each client into a process warning instead.
describe('unheard lost and error events', () => {
  const fx = useLockFixture();
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('the first unheard lost of a client becomes one process warning', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const locks = fx.client({ watchdogTimeout: 300 });
    const lock = locks.getLock('w-lost');
    const other = locks.getLock('w-lost-2');
    await lock.lock();
    await other.lock();
    await lock.forceUnlock();
    await other.forceUnlock();
    await vi.waitFor(() => expect(warn).toHaveBeenCalled(), { timeout: 2_000 });
    await sleep(300);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/emitted 'lost' with no listener: lock "w-lost(-2)?" \(deleted\)/);
    expect(warn.mock.calls[0]![1]).toMatchObject({ type: 'RLockWarning', code: 'RLOCK_UNHEARD_LOST' });
  });

  it('once per client and event name; a listener silences it', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const first = fx.client();
    expect(first.emit('error', new Error('boom'))).toBe(false);
    first.emit('error', new Error('again'));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/emitted 'error' with no listener: boom/);
    expect(warn.mock.calls[0]![1]).toMatchObject({ code: 'RLOCK_UNHEARD_ERROR' });

    // Another client warns for itself; a listened client never does.
    const second = fx.client();
    second.emit('error', new Error('elsewhere'));
    expect(warn).toHaveBeenCalledTimes(2);
    const heard = fx.client();
    const seen: unknown[] = [];
    heard.on('error', (error) => seen.push(error));
    heard.on('lost', (info) => seen.push(info));
    expect(heard.emit('error', new Error('handled'))).toBe(true);
    heard.emit('lost', { name: 'x', owner: 'o', reason: 'taken' });
    expect(seen).toHaveLength(2);
    expect(warn).toHaveBeenCalledTimes(2);
  });
});
