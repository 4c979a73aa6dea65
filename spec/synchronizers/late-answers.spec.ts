import { describe, expect, it } from 'vitest';
import { LockAcquireTimeoutError } from '../../lib/index.js';
import { useFaultRig } from '../helpers/fault-rig.js';

// A permit granted by Redis but answered after its own lease ran out may be out to someone else
// already: it is no acquisition. The semaphore gives it back and asks again within its wait.
describe('semaphore: late answers', () => {
  const rig = useFaultRig();

  it.each([false, true])('fair=%s: a grant answered after its lease ran out does not count', async (fair) => {
    const sem = rig.client(rig.lockConnect('proxy')).getSemaphore('slow', { permits: 1, fair });
    // Scripts loaded before the answers slow down.
    await (await sem.acquire({ leaseTime: 500 })).release();
    // Every answer comes 700 ms late; a lease of 500 ms has run out by then.
    rig.proxy.latency({ down: 700 });
    const started = performance.now();
    const outcome = await sem.acquire({ waitTime: 3_000, leaseTime: 500 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(LockAcquireTimeoutError);
    expect(performance.now() - started).toBeLessThan(3_000 + 1_000);
    rig.proxy.latency({});
    // Nothing was left out: each late grant was given back, so a rival takes the one permit.
    const rival = rig.client(rig.lockConnect('direct')).getSemaphore('slow', { permits: 1, fair });
    const permit = await rival.tryAcquire({ waitTime: 2_000, leaseTime: 10_000 });
    expect(permit).not.toBeNull();
    await permit!.release();
    expect(await rival.availablePermits()).toBe(1);
  });
});
