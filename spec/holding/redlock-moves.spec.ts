import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockHandedOffError,
  LockLostError,
  LockRedisError,
  RedLock,
  RedLockQuorumError,
  type LockClient,
  type LockClientOptions,
  type LockLostInfo,
  type RedLockOptions,
} from '../../lib/index.js';
import { sleep, until } from '../helpers/fixtures.js';
import { useServers } from '../helpers/servers.js';

// lease.extend, maxHoldTime, handOff and redLock.adopt on a RedLock over 3 independent masters:
// each works on the node holds, and counts when a majority of the nodes confirmed it in time.

describe('RedLock: leases that move and end', () => {
  const servers = useServers(3);
  let prefix = '';
  beforeEach(() => {
    prefix = `rm-${randomUUID().slice(0, 8)}`;
  });

  /** One LockClient per node, with this test's key prefix. */
  const nodes = (options: LockClientOptions = {}): LockClient[] => {
    const clients = servers.clients({ keyPrefix: prefix, ...options });
    for (const client of clients) client.on('error', () => undefined);
    return clients;
  };
  const redLock = (clients: LockClient[], name = 'x', options: RedLockOptions = { nodeTimeout: 500 }): RedLock =>
    new RedLock(...clients.map((client) => client.getLock(name)), options);
  const keyOf = (name: string): string => `{${prefix}:${name}}`;
  /** The lock's PTTL on each node. */
  const pttls = async (name = 'x'): Promise<number[]> =>
    Promise.all(servers.list.map((server) => servers.connect(server).pttl(keyOf(name))));

  describe('extend', () => {
    it('moves the lease on every node; the Lease outlives its first lease', async () => {
      const lease = await redLock(nodes()).acquire({ leaseTime: 1_000 });
      await lease.extend(5_000);
      // Confirmed by a majority; the third node's answer may come a little later.
      await until(async () => (await pttls()).every((ttl) => ttl > 4_000), 2_000);
      await sleep(1_300);
      expect(lease.signal.aborted).toBe(false);
      await lease.release();
      expect(await pttls()).toEqual([-2, -2, -2]);
    });

    it('succeeds with a majority; rejects with LockLostError once a majority no longer holds it', async () => {
      const clients = nodes();
      clients[0]!.on('lost', () => undefined);
      const lease = await redLock(clients).acquire({ leaseTime: 5_000 });
      const admin = servers.connect(servers.list[2]!);
      await admin.del(keyOf('x'));
      await lease.extend(10_000);
      expect(lease.signal.aborted).toBe(false);
      await servers.connect(servers.list[1]!).del(keyOf('x'));
      const error = await lease.extend(10_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockLostError);
      expect((error as LockLostError).cause).toBeInstanceOf(RedLockQuorumError);
      expect(((error as LockLostError).cause as RedLockQuorumError).operation).toBe('extend');
      expect(lease.signal.aborted).toBe(true);
      await lease.release();
    });

    it('nodes that do not answer in time: LockRedisError (cause: RedLockQuorumError), the hold keeps its lease', async () => {
      const lease = await redLock(nodes(), 'x', { nodeTimeout: 100 }).acquire({ leaseTime: 3_000 });
      servers.list[1]!.signal('SIGSTOP');
      servers.list[2]!.signal('SIGSTOP');
      try {
        const error = await lease.extend(10_000).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockRedisError);
        expect((error as LockRedisError).operation).toBe('extend');
        expect((error as LockRedisError).cause).toBeInstanceOf(RedLockQuorumError);
        expect(((error as LockRedisError).cause as RedLockQuorumError).failed).toBeGreaterThanOrEqual(1);
        expect(lease.signal.aborted).toBe(false);
      } finally {
        servers.list[1]!.signal('SIGCONT');
        servers.list[2]!.signal('SIGCONT');
      }
      await lease.release();
    });

    it('a watchdog-mode hold, or a bad ms: InvalidArgumentError before anything is sent', async () => {
      const red = redLock(nodes());
      const watched = await red.acquire();
      await expect(watched.extend(5_000)).rejects.toBeInstanceOf(InvalidArgumentError);
      await watched.release();
      const fixed = await red.acquire({ leaseTime: 2_000 });
      for (const bad of [-1, 0, 10, Number.NaN, Infinity, '5000', undefined]) {
        await expect(fixed.extend(bad as number)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      for (const ttl of await pttls()) expect(ttl).toBeLessThanOrEqual(2_000);
      await fixed.release();
      await expect(fixed.extend(5_000)).rejects.toBeInstanceOf(LockLostError);
    });
  });

  describe('maxHoldTime', () => {
    const capped = async (holder: LockClient[], take: (red: RedLock) => Promise<unknown>, capMs: number): Promise<void> => {
      const lost: { info: LockLostInfo; at: number }[] = [];
      holder[0]!.on('lost', (info) => lost.push({ info, at: performance.now() }));
      const start = performance.now();
      const held = await take(redLock(holder));
      // A rival over other clients: it gets the lock only once the holder let go.
      const rival = redLock(nodes());
      const waiting = rival.acquire({ waitTime: 8_000 }).then((lease) => ({ lease, at: performance.now() }));
      // Still held 1.7 s after the call began (past the 1.5 s lease: renewed), counted from before
      // the call, whose five nodes take their time on a busy machine.
      await sleep(Math.max(0, start + 1_700 - performance.now()));
      expect(lost).toEqual([]);
      const { lease, at } = await waiting;
      expect(lost).toHaveLength(1);
      expect(lost[0]!.info.reason).toBe('max-hold-time');
      expect(lost[0]!.at - start).toBeGreaterThanOrEqual(capMs - 10);
      // Told first; and let go at once: left to its lease, it would last 1 000–1 500 ms more.
      expect(lost[0]!.at).toBeLessThanOrEqual(at);
      expect(at - lost[0]!.at).toBeLessThan(800);
      if (held && typeof held === 'object' && 'signal' in held) {
        const signal = (held as { signal: AbortSignal }).signal;
        expect(signal.aborted).toBe(true);
        expect((signal.reason as LockLostError).reason).toBe('max-hold-time');
      }
      await lease.release();
    };

    it('per call: a watchdog hold is renewed until maxHoldTime, then let go — the holder is told before a rival gets it', async () => {
      await capped(nodes({ watchdogTimeout: 1_500 }), (red) => red.acquire({ maxHoldTime: 2_000 }), 2_000);
    });

    it('the home client’s maxHoldTime option applies (lock() too)', async () => {
      const holder = [...nodes({ watchdogTimeout: 1_500, maxHoldTime: 2_000 })];
      await capped(holder, (red) => red.lock(), 2_000);
    });

    it('tryLock and withLock take it; a fixed lease is not capped; maxRenewals still caps', async () => {
      const clients = nodes({ watchdogTimeout: 1_000 });
      const reasons: string[] = [];
      clients[0]!.on('lost', (info) => reasons.push(info.reason));
      const red = redLock(clients);
      expect(await red.tryLock({ waitTime: 0, maxHoldTime: 300 })).toBe(true);
      const fixed = await redLock(clients, 'y').acquire({ leaseTime: 2_000, maxHoldTime: 100 });
      const inBody = await redLock(clients, 'z').withLock(async (lease) => {
        await sleep(700);
        return lease.signal.aborted;
      }, { maxHoldTime: 300 });
      expect(inBody).toBe(true);
      expect(fixed.signal.aborted).toBe(false);
      expect(reasons).toEqual(['max-hold-time', 'max-hold-time']);
      expect(await red.isLocked()).toBe(false);
      await fixed.release();
      const renewals = await redLock(clients, 'r', { nodeTimeout: 500, maxRenewals: 1 }).acquire({ maxHoldTime: 60_000 });
      await sleep(2_500);
      expect((renewals.signal.reason as LockLostError).reason).toBe('expired');
      await expect(redLock(clients).acquire({ maxHoldTime: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    });
  });

  describe('hand-off and redLock.adopt', () => {
    it('watchdog mode: handed off (this process lets go), adopted by a RedLock over other clients, renewed past 3 × watchdogTimeout', async () => {
      const watchdogTimeout = 1_000;
      const from = redLock(nodes({ watchdogTimeout }));
      const lease = await from.acquire();
      const handle = JSON.parse(JSON.stringify(await lease.handOff())) as Parameters<RedLock['adopt']>[0];
      expect(handle.kind).toBe('redlock');
      expect(handle.members).toHaveLength(3);
      expect(handle.leaseTime).toBe(-1);
      expect(lease.signal.reason).toBeInstanceOf(LockHandedOffError);
      await lease.release();
      expect(await from.isHeldByCurrentOwner()).toBe(false);
      const adopterClients = nodes({ watchdogTimeout });
      const lost: string[] = [];
      adopterClients[0]!.on('lost', (info) => lost.push(info.reason));
      const adopted = await redLock(adopterClients).adopt(handle);
      expect(adopted.owner).toBe(lease.owner);
      await sleep(3 * watchdogTimeout + 300);
      expect(adopted.signal.aborted).toBe(false);
      expect(lost).toEqual([]);
      expect(await redLock(nodes()).tryLock()).toBe(false);
      // A second adoption, anywhere: LockLostError.
      await expect(redLock(nodes()).adopt(handle)).rejects.toBeInstanceOf(LockLostError);
      await adopted.release();
      expect(await pttls()).toEqual([-2, -2, -2]);
    });

    it('a fixed lease keeps its end; re-entries move with it and one release() ends them all; extend works on the adopted Lease', async () => {
      const clients = nodes();
      const red = redLock(clients);
      await clients[0]!.runInContext(async () => {
        const lease = await red.acquire({ leaseTime: 3_000 });
        await red.lock(3_000);
        const handle = await lease.handOff();
        expect(handle.holdCount).toBe(2);
        expect(handle.leaseTime).toBeLessThanOrEqual(3_000);
        // This context handed it off: it cannot take it again (it would re-enter the adopter's hold).
        await expect(red.tryLock()).rejects.toBeInstanceOf(LockHandedOffError);
        expect(handle.members!.every((member) => member !== null)).toBe(true);
        const adopted = await redLock(nodes()).adopt(handle);
        await adopted.extend(10_000);
        for (const ttl of await pttls()) expect(ttl).toBeGreaterThan(8_000);
        await adopted.release();
        expect(await pttls()).toEqual([-2, -2, -2]);
      });
    });

    it('a handle adopted after its gap ran out: LockLostError, and nobody holds it', async () => {
      const lease = await redLock(nodes({ watchdogTimeout: 400 })).acquire();
      const handle = await lease.handOff({ adoptWithin: 300 });
      await sleep(800);
      await expect(redLock(nodes()).adopt(handle)).rejects.toBeInstanceOf(LockLostError);
      expect(await redLock(nodes()).tryLock()).toBe(true);
    });

    it('the adopter’s maxHoldTime counts from the adoption', async () => {
      const lease = await redLock(nodes()).acquire();
      const handle = await lease.handOff();
      const clients = nodes({ watchdogTimeout: 1_000 });
      const reasons: string[] = [];
      clients[0]!.on('lost', (info) => reasons.push(info.reason));
      const adopted = await redLock(clients).adopt(handle, { maxHoldTime: 1_200 });
      await sleep(600);
      expect(adopted.signal.aborted).toBe(false);
      await sleep(1_200);
      expect((adopted.signal.reason as LockLostError).reason).toBe('max-hold-time');
      expect(reasons).toEqual(['max-hold-time']);
      expect(await redLock(nodes()).tryLock()).toBe(true);
    });

    it('handles that do not fit: locks.adopt(redlock handle), redLock.adopt(other kind, other nodes) → InvalidArgumentError', async () => {
      const clients = nodes();
      const lease = await redLock(clients).acquire();
      const handle = await lease.handOff();
      await expect(clients[0]!.adopt(handle)).rejects.toThrow(/redLock\.adopt/);
      await expect(clients[0]!.adopt(handle)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(redLock(nodes(), 'other').adopt(handle)).rejects.toBeInstanceOf(InvalidArgumentError);
      const two = nodes().slice(0, 2);
      await expect(new RedLock(...two.map((client) => client.getLock('x'))).adopt(handle)).rejects.toBeInstanceOf(InvalidArgumentError);
      const plain = await clients[1]!.getLock('plain').acquire();
      await expect(redLock(nodes()).adopt(await plain.handOff())).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(redLock(nodes()).adopt({ ...handle, members: [null, null, 5] } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      // Still adoptable after all those refusals.
      const adopted = await redLock(nodes()).adopt(handle);
      await adopted.release();
    });

    it('a hold no longer held by a majority cannot be handed off (LockLostError)', async () => {
      const clients = nodes();
      clients[0]!.on('lost', () => undefined);
      const lease = await redLock(clients).acquire({ leaseTime: 5_000 });
      await servers.connect(servers.list[1]!).del(keyOf('x'));
      await servers.connect(servers.list[2]!).del(keyOf('x'));
      await expect(lease.handOff()).rejects.toBeInstanceOf(LockLostError);
      expect(lease.signal.aborted).toBe(true);
    });

    it('a hand-off without a majority in time: the handed-off node holds are taken back, the hold stays', async () => {
      const clients = nodes();
      const red = redLock(clients, 'x', { nodeTimeout: 100 });
      const lease = await red.acquire({ leaseTime: 4_000 });
      servers.list[1]!.signal('SIGSTOP');
      servers.list[2]!.signal('SIGSTOP');
      let error: unknown;
      try {
        error = await lease.handOff().catch((e: unknown) => e);
      } finally {
        servers.list[1]!.signal('SIGCONT');
        servers.list[2]!.signal('SIGCONT');
      }
      expect(error).toBeInstanceOf(LockRedisError);
      expect(lease.signal.aborted).toBe(false);
      // The frozen nodes' hand-offs land after SIGCONT and are taken back too.
      await sleep(300);
      await lease.extend(8_000);
      for (const ttl of await pttls()) expect(ttl).toBeGreaterThan(6_000);
      await lease.release();
      expect(await pttls()).toEqual([-2, -2, -2]);
    });
  });
});
