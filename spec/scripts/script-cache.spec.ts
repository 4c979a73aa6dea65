import { describe, expect, it } from 'vitest';
import { CommandRecorder } from '../helpers/command-stats.js';
import { useOwnServer } from '../helpers/own-server.js';

// Scripts go out as EVALSHA once a client has sent them; a server that lost its script cache
// (restart, failover, SCRIPT FLUSH) answers NOSCRIPT, and the call is sent again with the text.

describe('script cache', () => {
  const own = useOwnServer({ keyPrefix: 'cache' });

  it('lock calls go on after SCRIPT FLUSH, and a cycle is two EVALSHAs once the scripts are known', async () => {
    const lock = own.client().getLock('flushed');
    await lock.lock(10_000);
    await lock.unlock();

    await own.admin.script('FLUSH');
    await lock.lock(10_000);
    expect(await lock.isHeldByCurrentOwner()).toBe(true);
    await lock.unlock();
    expect(await own.admin.exists('{cache:flushed}')).toBe(0);

    const recorder = await CommandRecorder.start(own.server.url);
    expect(await lock.tryLock(0, 10_000)).toBe(true);
    await lock.unlock();
    await recorder.stop();
    expect(recorder.names).toEqual(['evalsha', 'evalsha']);
  });
});
