import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { LockLostError, RedLock, type LeaseHandle, type LockClient, type LockClientOptions } from '../../lib/index.js';
import { sleep } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';
import { childBundle } from '../../tools/spec-children.js';

const NODE_ARGS = [childBundle('spec/helpers/redlock-hand-off-worker.ts')];

describe('RedLock hand-off across processes', () => {
  const servers = useServers(3);
  const watchdogTimeout = 1_000;

  it('a child takes a watchdog RedLock, hands it off and is SIGKILLed; the adopter renews past 3 × watchdogTimeout, no rival gets it meanwhile', async () => {
    const prefix = `rhp-${randomUUID().slice(0, 8)}`;
    const nodes = (options: LockClientOptions = {}): LockClient[] => servers.clients({ keyPrefix: prefix, ...options });
    const redLock = (clients: LockClient[]): RedLock => new RedLock(...clients.map((client) => client.getLock('moved')), { nodeTimeout: 500 });

    const child = spawn(process.execPath, [...NODE_ARGS, servers.list.map((server) => server.url).join(','), prefix, String(watchdogTimeout)]);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const next = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
    if (next.done === true) throw new Error(`redlock hand-off worker ended early: ${stderr}`);
    const handle = JSON.parse(next.value) as LeaseHandle;
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(handle.kind).toBe('redlock');

    const adopterClients = nodes({ watchdogTimeout });
    const lost: string[] = [];
    adopterClients[0]!.on('lost', (info) => lost.push(info.reason));
    const held = await redLock(adopterClients).adopt(handle);
    // A rival tries all along: it must never get the lock while the adopter holds it.
    const rival = redLock(nodes());
    let rivalGot = false;
    const deadline = performance.now() + 3 * watchdogTimeout + 300;
    while (performance.now() < deadline) {
      if (await rival.tryLock()) {
        rivalGot = true;
        await rival.unlock();
      }
      await sleep(50);
    }
    expect({ rivalGot, aborted: held.signal.aborted, lost }).toEqual({ rivalGot: false, aborted: false, lost: [] });
    await held.release();
    expect(await rival.tryLock()).toBe(true);
    await rival.unlock();
    // The dead child's handle cannot be used twice.
    await expect(redLock(nodes()).adopt(handle)).rejects.toBeInstanceOf(LockLostError);
  }, 30_000);
});
