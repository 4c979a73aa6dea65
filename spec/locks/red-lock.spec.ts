import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockClient,
  LockClientClosedError,
  LockLostError,
  LockNotHeldError,
  RedLock,
  RedLockQuorumError,
  type LockClientOptions,
  type LockEventInfo,
  type LockLostInfo,
  type RedLockOptions,
} from '../../lib/index.js';
import { freePort, spawnRedis, type SpawnedRedis } from '../../tools/redis-server.js';
import { CommandRecorder } from '../helpers/command-stats.js';
import { contend, type ContendResult } from '../helpers/contend.js';
import { isIdentityKey, isRecord, OverlapProbe, sleep } from '../helpers/fixtures.js';
import { childBundle } from '../../tools/spec-children.js';

const NODES = 5;

// Five independent masters, spawned for this file. Fault tests stop, restart, freeze (SIGSTOP)
// and resume them; every test leaves them running and unfrozen.
describe('RedLock over 5 independent redis-servers', () => {
  let servers: SpawnedRedis[] = [];
  let prefix = '';
  const opened: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    servers = await Promise.all(Array.from({ length: NODES }, () => spawnRedis()));
  }, 30_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  }, 30_000);
  beforeEach(() => {
    prefix = `rl-${randomUUID().slice(0, 8)}`;
  });
  afterEach(async () => {
    for (const thing of opened.reverse()) await thing.close().catch(() => undefined);
    opened.length = 0;
  });

  /**
   * A connection that never hangs a test: quick reconnects, a command gives up after one retry
   * while its server is down, and after 1 s while its server is frozen.
   */
  const connect = (server: SpawnedRedis, options: RedisOptions = {}): Redis => {
    const conn = new Redis(server.url, { retryStrategy: () => 50, maxRetriesPerRequest: 1, commandTimeout: 1_000, ...options });
    conn.on('error', () => undefined);
    opened.push({ close: () => Promise.resolve(conn.disconnect()) });
    return conn;
  };

  /** One LockClient per node, with this test's key prefix. */
  const clientsOnAllNodes = (options: LockClientOptions = {}): LockClient[] =>
    servers.map((server) => {
      const client = new LockClient(connect(server), { keyPrefix: prefix, ...options });
      client.on('error', () => undefined);
      opened.push(client);
      return client;
    });

  const redLockOf = (clients: LockClient[], name: string, options?: RedLockOptions): RedLock => {
    const locks = clients.map((client) => client.getLock(name));
    return options ? new RedLock(...locks, options) : new RedLock(...locks);
  };

  /** This test's keys on each node (SCAN); a node that does not answer shows as null. */
  const keysPerNode = async (): Promise<(string[] | null)[]> =>
    Promise.all(
      servers.map(async (server) => {
        const conn = connect(server, { maxRetriesPerRequest: 0 });
        try {
          const found: string[] = [];
          let cursor = '0';
          do {
            const [next, batch] = await conn.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
            cursor = next;
            found.push(...batch);
          } while (cursor !== '0');
          return found.filter((key) => !isRecord(key) && !isIdentityKey(key)).sort();
        } catch {
          return null;
        } finally {
          conn.disconnect();
        }
      }),
    );

  /** Polls until no node has a key of this test (bounded), and returns what it saw last. */
  const settledKeys = async (nodes: number[] = [0, 1, 2, 3, 4], withinMs = 3_000): Promise<(string[] | null)[]> => {
    const until = performance.now() + withinMs;
    let seen = await keysPerNode();
    while (nodes.some((i) => (seen[i]?.length ?? 1) > 0) && performance.now() < until) {
      await sleep(50);
      seen = await keysPerNode();
    }
    return nodes.map((i) => seen[i] ?? null);
  };

  const lockKey = (name: string): string => `{${prefix}:${name}}`;

  /**
   * Per node, `read(connection)`, polled (bounded) until `done` holds: a round returns once a
   * majority answered, so the last nodes may still be catching up when the call returns.
   */
  const perNode = async <T,>(read: (conn: Redis) => Promise<T>, done: (values: T[]) => boolean): Promise<T[]> => {
    const conns = servers.map((server) => connect(server));
    let values = await Promise.all(conns.map(read));
    for (let i = 0; i < 40 && !done(values); i += 1) {
      await sleep(25);
      values = await Promise.all(conns.map(read));
    }
    return values;
  };

  it('acquires on every node, tells a busy lock from a free one, and releases everywhere', async () => {
    const clients = clientsOnAllNodes();
    const events: [string, LockEventInfo][] = [];
    clients[0]!.on('acquired', (info) => events.push(['acquired', info]));
    clients[0]!.on('released', (info) => events.push(['released', info]));
    // A first call opens connections and sends script text: more than the default 50 ms node
    // timeout on a loaded machine. Timeouts are this file's later tests' business.
    const redLock = redLockOf(clients, 'basic', { nodeTimeout: 1_000 });
    expect(redLock.name).toBe('basic');

    expect(await redLock.tryLock(0, 10_000)).toBe(true);
    const held = (ttl: number): boolean => ttl > 9_000 && ttl <= 10_000;
    const ttls = await Promise.all(servers.map((server) => connect(server).pttl(lockKey('basic'))));
    expect(ttls.filter(held).length).toBeGreaterThanOrEqual(3);
    // The two answers not awaited arrive too: every node holds the lock.
    expect((await perNode((conn) => conn.pttl(lockKey('basic')), (all) => all.every(held))).every(held)).toBe(true);
    expect(await redLock.isLocked()).toBe(true);
    expect(await redLock.isHeldByCurrentOwner()).toBe(true);
    expect(await redLock.remainTimeToLive()).toBeGreaterThan(9_000);

    // Another set of clients on the same five masters finds it held on every node.
    const rival = redLockOf(clientsOnAllNodes(), 'basic');
    expect(await rival.tryLock(0, 10_000)).toBe(false);
    expect(rival.lastFailure).toBeInstanceOf(RedLockQuorumError);
    // Three refusals settle it: the round does not wait for the last two answers.
    expect(rival.lastFailure).toMatchObject({ operation: 'acquire', nodes: 5, quorum: 3, granted: 0, failed: 0 });
    expect(rival.lastFailure!.refused + rival.lastFailure!.unanswered).toBe(5);
    expect(rival.lastFailure!.refused).toBeGreaterThanOrEqual(3);
    expect(rival.lastFailure?.message).toMatch(/acquire: 3 of 5 nodes needed, in \d+ ms: 0 granted, \d refused \(held by another owner\), 0 failed/);
    await expect(rival.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    const timedOut = await rival.acquire({ waitTime: 100 }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(LockAcquireTimeoutError);
    expect((timedOut as Error).message).toMatch(/^timed out after 100 ms waiting for RedLock "basic"; last round: acquire: 3 of 5/);
    expect((timedOut as Error).cause).toBeInstanceOf(RedLockQuorumError);
    expect((timedOut as Error).cause).toMatchObject({ operation: 'acquire', granted: 0, refused: 3 });
    expect(((timedOut as Error).cause as RedLockQuorumError).attempts).toBeGreaterThanOrEqual(2);

    await redLock.unlock();
    expect(await redLock.isLocked()).toBe(false);
    expect(await redLock.remainTimeToLive()).toBe(-2);
    await expect(redLock.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(events.map(([kind, info]) => [kind, info.name])).toEqual([
      ['acquired', 'basic'],
      ['released', 'basic'],
    ]);
    expect(events[0]![1].owner.startsWith(`${clients[0]!.id}:`)).toBe(true);
    expect(await settledKeys()).toEqual([[], [], [], [], []]);
  });

  it('two competing RedLocks over the same 5 nodes never both hold (200 rounds each)', async () => {
    const first = redLockOf(clientsOnAllNodes(), 'contended');
    const second = redLockOf(clientsOnAllNodes(), 'contended');
    const result = await contend((task) => (task === 0 ? first : second), connect(servers[0]!), `${prefix}:probe`, 2, 200);
    expect(result).toEqual({ entries: 400, violations: 0 });
    expect(await settledKeys([1, 2, 3, 4])).toEqual([[], [], [], []]);
  }, 60_000);

  it('concurrent tasks on one RedLock and on a rival never overlap; a one-tick burst has at most one winner', async () => {
    const redLock = redLockOf(clientsOnAllNodes(), 'tasks');
    const rival = redLockOf(clientsOnAllNodes(), 'tasks');
    const probe = new OverlapProbe();
    await Promise.all(
      Array.from({ length: 6 }, async (_, task) => {
        const lock = task % 2 ? rival : redLock;
        for (let round = 0; round < 15; round += 1) {
          await lock.withLock(async () => {
            probe.enter();
            await sleep(1);
            probe.leave();
          });
        }
      }),
    );
    expect({ entries: probe.entries, maxInside: probe.maxInside }).toEqual({ entries: 90, maxInside: 1 });
    // Thirty single attempts at once may split the votes so that nobody wins, but never two.
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? rival : redLock).tryLock(0, 10_000)));
    expect(results.filter(Boolean).length).toBeLessThanOrEqual(1);
  }, 60_000);

  it('3 child processes × 2 tasks × 20 rounds, each process with its own 5 clients, never overlap', async () => {
    const runs = Array.from({ length: 3 }, async () => {
      const child = spawn(
        process.execPath,
        [childBundle('spec/helpers/red-lock-contend-worker.ts'), prefix, '2', '20', ...servers.map((server) => server.url)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      expect(code).toBe(0);
      return JSON.parse(out) as ContendResult;
    });
    expect(await Promise.all(runs)).toEqual([
      { entries: 40, violations: 0 },
      { entries: 40, violations: 0 },
      { entries: 40, violations: 0 },
    ]);
    expect(await settledKeys([1, 2, 3, 4])).toEqual([[], [], [], []]);
  }, 60_000);

  it('with 2 of 5 nodes down it still acquires, renews and releases', async () => {
    const clients = clientsOnAllNodes({ watchdogTimeout: 600 });
    let renewed = 0;
    const lost: LockLostInfo[] = [];
    clients[0]!.on('renewed', () => (renewed += 1));
    clients[0]!.on('lost', (info) => lost.push(info));
    const redLock = redLockOf(clients, 'two-down');
    await Promise.all([servers[3]!.stop(), servers[4]!.stop()]);
    try {
      const started = performance.now();
      const lease = await redLock.acquire({ waitTime: 2_000 });
      expect(performance.now() - started).toBeLessThan(1_000);
      await sleep(1_300);
      // Renewed every 200 ms on the three live nodes; never reported lost.
      expect(renewed).toBeGreaterThanOrEqual(4);
      expect(lost).toEqual([]);
      expect(lease.signal.aborted).toBe(false);
      expect(await redLock.isLocked()).toBe(true);
      expect(await redLock.remainTimeToLive()).toBeGreaterThan(0);
      await lease.release();
      expect(await settledKeys([0, 1, 2])).toEqual([[], [], []]);
    } finally {
      await Promise.all([servers[3]!.start(), servers[4]!.start()]);
    }
  });

  it('with 3 of 5 nodes down tryLock(500) returns false in time, says why, and leaves no key', async () => {
    const nodeTimeout = 50;
    const redLock = redLockOf(clientsOnAllNodes(), 'three-down', { nodeTimeout });
    await Promise.all([servers[2]!.stop(), servers[3]!.stop(), servers[4]!.stop()]);
    try {
      const started = performance.now();
      expect(await redLock.tryLock(500, 10_000)).toBe(false);
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(500);
      // The wait, plus at most one round and its undo in flight, plus scheduling slack.
      expect(elapsed).toBeLessThan(500 + 2 * nodeTimeout + 300);
      const failure = redLock.lastFailure!;
      expect(failure).toMatchObject({ operation: 'acquire', refused: 0, failed: 3 });
      // Three failures decide the round: the live nodes' grants may not have been awaited.
      expect(failure.granted + failure.unanswered).toBe(2);
      expect(failure.attempts).toBeGreaterThan(1);
      expect(failure.failures.map((f) => f.node)).toEqual([2, 3, 4]);
      expect(failure.message).toMatch(/\d granted, 0 refused \(held by another owner\), 3 failed \(node 2: .+; node 3: .+; node 4: .+\)/);
      // Every round released what it got on the live nodes before the call returned.
      const live = await keysPerNode();
      expect([live[0], live[1]]).toEqual([[], []]);
      expect(await redLock.isLocked().catch((error: unknown) => error)).toBeInstanceOf(RedLockQuorumError);
    } finally {
      await Promise.all([servers[2]!.start(), servers[3]!.start(), servers[4]!.start()]);
    }
  });

  it('frozen nodes (SIGSTOP) cost at most the per-node timeout, and all is consistent after SIGCONT', async () => {
    const nodeTimeout = 100;
    const clients = clientsOnAllNodes();
    const redLock = redLockOf(clients, 'frozen', { nodeTimeout });
    const rival = redLockOf(clientsOnAllNodes(), 'frozen', { nodeTimeout });
    const blocker = clientsOnAllNodes()[0]!.getLock('frozen');
    servers[3]!.signal('SIGSTOP');
    servers[4]!.signal('SIGSTOP');
    try {
      // Three healthy nodes are a majority: the frozen ones are not waited for at all.
      let started = performance.now();
      expect(await redLock.tryLock(0, 10_000)).toBe(true);
      expect(performance.now() - started).toBeLessThan(nodeTimeout);
      started = performance.now();
      await redLock.unlock();
      expect(performance.now() - started).toBeLessThan(nodeTimeout);

      // Node 0 held by someone else, nodes 1 and 2 grant: only the frozen nodes could decide,
      // so the round waits for them, once, for the per-node timeout.
      expect(await blocker.tryLock(0, 10_000)).toBe(true);
      started = performance.now();
      expect(await rival.tryLock(0, 10_000)).toBe(false);
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(nodeTimeout - 1);
      expect(elapsed).toBeLessThan(nodeTimeout + 250);
      expect(rival.lastFailure).toMatchObject({ granted: 2, refused: 1, failed: 2, unanswered: 0 });
      expect(rival.lastFailure!.failures).toEqual([
        { node: 3, reason: 'timeout' },
        { node: 4, reason: 'timeout' },
      ]);
      await blocker.unlock();
    } finally {
      servers[3]!.signal('SIGCONT');
      servers[4]!.signal('SIGCONT');
    }
    // The frozen nodes ran the queued attempts and releases in order once resumed: nothing is left.
    expect(await settledKeys()).toEqual([[], [], [], [], []]);
    const lease = await rival.acquire({ waitTime: 2_000 });
    const counts = await perNode(
      (conn) => conn.hget(lockKey('frozen'), lease.owner),
      (all) => all.every((count) => count === '1'),
    );
    expect(counts).toEqual(['1', '1', '1', '1', '1']);
    await lease.release();
    expect(await settledKeys()).toEqual([[], [], [], [], []]);
  });

  it('a holder whose renewals reach no majority (3 nodes frozen) is told: `lost` (quorum) and an aborted lease', async () => {
    const clients = clientsOnAllNodes({ watchdogTimeout: 600 });
    const lost: LockLostInfo[] = [];
    clients[0]!.on('lost', (info) => lost.push(info));
    const redLock = redLockOf(clients, 'renew-lost');
    const lease = await redLock.acquire();
    const frozen = [servers[2]!, servers[3]!, servers[4]!];
    for (const server of frozen) server.signal('SIGSTOP');
    try {
      // Validity is about 600 − 8 ms from the last renewal: the loss is known within that.
      for (let i = 0; i < 40 && !lease.signal.aborted; i += 1) await sleep(25);
      expect(lease.signal.aborted).toBe(true);
      const reason = lease.signal.reason as LockLostError;
      expect(reason).toBeInstanceOf(LockLostError);
      expect(reason).toMatchObject({ reason: 'quorum', lockName: 'renew-lost' });
      expect(reason.cause).toBeInstanceOf(RedLockQuorumError);
      expect(reason.cause).toMatchObject({ operation: 'renew', granted: 2, failed: 3 });
      expect(lost).toEqual([{ name: 'renew-lost', owner: lease.owner, reason: 'quorum' }]);
      // Releasing a lease known lost is no error.
      await lease.release();
    } finally {
      for (const server of frozen) server.signal('SIGCONT');
    }
    // Renewals queued on the frozen nodes ran on resume; their 600 ms TTL then ran out.
    expect(await settledKeys()).toEqual([[], [], [], [], []]);
  });

  it('a majority of nodes losing the key is a loss too; a single node losing it is not', async () => {
    const clients = clientsOnAllNodes({ watchdogTimeout: 300 });
    const lost: LockLostInfo[] = [];
    clients[0]!.on('lost', (info) => lost.push(info));
    const redLock = redLockOf(clients, 'deleted');
    const lease = await redLock.acquire();
    await connect(servers[0]!).del(lockKey('deleted'));
    await sleep(350);
    expect(lease.signal.aborted).toBe(false);
    await Promise.all([1, 2].map((i) => connect(servers[i]!).del(lockKey('deleted'))));
    for (let i = 0; i < 40 && !lease.signal.aborted; i += 1) await sleep(25);
    expect(lease.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'quorum' });
    expect((lease.signal.reason as LockLostError).cause).toMatchObject({ operation: 'renew', refused: 3 });
    expect(lost).toEqual([{ name: 'deleted', owner: lease.owner, reason: 'quorum' }]);
    await lease.release();
  });

  it('never reports a loss when renewals race releases', async () => {
    // Renewals every 50 ms race the 200 lock/unlock rounds; a lease much shorter than this would
    // be run out by the holder's clock (25 ms margin) on a loaded machine, a loss that is real.
    const clients = clientsOnAllNodes({ watchdogTimeout: 150 });
    const lost: LockLostInfo[] = [];
    clients[0]!.on('lost', (info) => lost.push(info));
    const redLock = redLockOf(clients, 'race');
    for (let i = 0; i < 200; i += 1) {
      await redLock.lock();
      await redLock.unlock();
    }
    await sleep(50);
    expect(lost).toEqual([]);
  });

  it('is reentrant per owner: in a context, in withLock, across RedLock objects over the same locks', async () => {
    const clients = clientsOnAllNodes();
    const redLock = redLockOf(clients, 'reentrant');
    const sameLocks = redLockOf(clients, 'reentrant');
    await clients[0]!.runInContext(async () => {
      await redLock.lock();
      expect(await sameLocks.tryLock()).toBe(true);
      expect(await redLock.getHoldCount()).toBe(2);
      const lease = await redLock.acquire();
      const counts = await perNode(
        (conn) => conn.hget(lockKey('reentrant'), lease.owner),
        (all) => all.every((count) => count === '3'),
      );
      expect(counts).toEqual(['3', '3', '3', '3', '3']);
      await lease.release();
      await sameLocks.unlock();
      expect(await redLock.getHoldCount()).toBe(1);
      expect(await redLock.isLocked()).toBe(true);
      await redLock.unlock();
      expect(await redLock.getHoldCount()).toBe(0);
    });
    expect(await redLock.isLocked()).toBe(false);

    const depths = await redLock.withLock(async () => {
      await sleep(5);
      const outer = await redLock.getHoldCount();
      const inner = await redLock.withLock(() => redLock.getHoldCount());
      return [outer, inner, await redLock.getHoldCount()];
    });
    expect(depths).toEqual([1, 2, 1]);
    expect(await settledKeys()).toEqual([[], [], [], [], []]);
  });

  it('outside a context each call is a new owner; a non-owner cannot unlock', async () => {
    const clients = clientsOnAllNodes();
    const redLock = redLockOf(clients, 'owners');
    expect(await redLock.tryLock()).toBe(true);
    expect(await redLock.tryLock()).toBe(false);
    expect(await redLock.isHeldByCurrentOwner()).toBe(true);
    const notHeld = await clients[0]!.runInContext(() => redLock.unlock()).catch((error: unknown) => error);
    expect(notHeld).toBeInstanceOf(LockNotHeldError);
    expect((notHeld as LockNotHeldError).cause).toMatchObject({ operation: 'release', granted: 0 });
    await expect(redLockOf(clientsOnAllNodes(), 'owners').unlock()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await redLock.isLocked()).toBe(true);
    await redLock.unlock();
    expect(await redLock.isLocked()).toBe(false);
    await expect(redLock.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('nodes that restarted empty do not let a second owner in while the first holds a majority', async () => {
    // Roomy node timeouts: first calls open cold connections and load the scripts.
    const holder = redLockOf(clientsOnAllNodes(), 'restart', { nodeTimeout: 1_000 });
    const rivalClients = clientsOnAllNodes();
    const rival = redLockOf(rivalClients, 'restart', { nodeTimeout: 1_000 });
    /** Until the rival's client on `node` answers again: its connection is back after the restart. */
    const rivalReconnected = async (node: number): Promise<void> => {
      const probe = rivalClients[node]!.getLock('probe');
      for (let i = 0; i < 40 && !(await probe.isLocked().then(() => true, () => false)); i += 1) await sleep(25);
    };
    expect(await holder.tryLock(0, 20_000)).toBe(true);
    // tryLock answers at a majority: wait for the other nodes' grants, or a late one would be
    // resent to a node after its restart and fill it again.
    const everywhere = await perNode((conn) => conn.exists(lockKey('restart')), (all) => all.every((n) => n === 1));
    expect(everywhere).toEqual([1, 1, 1, 1, 1]);
    for (const restarted of [0, 1]) {
      await servers[restarted]!.stop();
      await servers[restarted]!.start();
      // Wait until the rival's client is connected again, so the empty node really answers it.
      const probe = connect(servers[restarted]!);
      for (let i = 0; i < 40 && (await probe.ping().catch(() => null)) !== 'PONG'; i += 1) await sleep(25);
      await rivalReconnected(restarted);
      expect(await connect(servers[restarted]!).exists(lockKey('restart'))).toBe(0);
      expect(await rival.tryLock(0, 20_000)).toBe(false);
      // The empty nodes may grant, but the three others refuse: no majority for the rival.
      expect(rival.lastFailure).toMatchObject({ refused: 3, failed: 0 });
      expect(rival.lastFailure!.granted).toBeLessThanOrEqual(restarted + 1);
      expect(await holder.isLocked()).toBe(true);
    }
    // The limit: a third node restarted empty within the holder's lease hands the rival a
    // majority while the holder still believes it holds the lock. Hence the delayed restart.
    await servers[2]!.stop();
    await servers[2]!.start();
    const probe = connect(servers[2]!);
    for (let i = 0; i < 40 && (await probe.ping().catch(() => null)) !== 'PONG'; i += 1) await sleep(25);
    await rivalReconnected(2);
    expect(await rival.tryLock(0, 20_000)).toBe(true);
    await rival.unlock();
    await expect(holder.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('maxRenewals caps watchdog renewal: the hold then expires and the holder is told', async () => {
    const clients = clientsOnAllNodes({ watchdogTimeout: 300 });
    let renewed = 0;
    const lost: LockLostInfo[] = [];
    clients[0]!.on('renewed', () => (renewed += 1));
    clients[0]!.on('lost', (info) => lost.push(info));
    const redLock = redLockOf(clients, 'capped', { maxRenewals: 2 });
    const lease = await redLock.acquire();
    for (let i = 0; i < 80 && !lease.signal.aborted; i += 1) await sleep(25);
    expect(renewed).toBe(2);
    expect(lease.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'expired' });
    expect(lost).toEqual([{ name: 'capped', owner: lease.owner, reason: 'expired' }]);
    expect(await settledKeys(undefined, 1_000)).toEqual([[], [], [], [], []]);
    await lease.release();
  });

  it('a waiter is woken by the release notices, not by polling or the holder TTL', async () => {
    // A roomy node timeout for the holder's first call (cold connections, scripts loaded).
    const holder = redLockOf(clientsOnAllNodes(), 'wake', { nodeTimeout: 1_000 });
    const waiterClients = clientsOnAllNodes();
    // A roomy per-node timeout: it also bounds how long the first wait lets its subscriptions take.
    const waiter = redLockOf(waiterClients, 'wake', { nodeTimeout: 250 });
    expect(await holder.tryLock(0, 20_000)).toBe(true);
    const recorder = await CommandRecorder.start(servers[0]!.url);
    const started = performance.now();
    const waiting = waiter.tryLock(10_000, 10_000);
    await sleep(1_000);
    const releasedAt = performance.now();
    await holder.unlock();
    expect(await waiting).toBe(true);
    const handOver = performance.now() - releasedAt;
    await recorder.stop();
    // The holder's key would have lived 20 s; the wait budget is 10 s.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(handOver).toBeLessThan(500);
    // Acquire-script calls of the waiter on node 0 (its client id and 5 more arguments): a first
    // try, one more once subscribed, one after the notice. Polling every 100 ms would make ten.
    const waiterId = waiterClients[0]!.id;
    const attempts = recorder.commands.filter(
      (args) => (args[0] === 'evalsha' || args[0] === 'eval') && args.length === 10 && args[7] === waiterId,
    );
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.length).toBeLessThanOrEqual(4);
    await waiter.unlock();
  });

  it('a waiter whose wake-up channels never work still gets the lock soon after the release', async () => {
    const holder = redLockOf(clientsOnAllNodes(), 'deaf');
    // Subscriber connections to a port where nothing listens: no notice can ever arrive.
    const nowhere = await freePort();
    const deafClients = servers.map((server) => {
      const subscriber = new Redis({ port: nowhere, host: '127.0.0.1', retryStrategy: () => 50, maxRetriesPerRequest: 1 });
      subscriber.on('error', () => undefined);
      opened.push({ close: () => Promise.resolve(subscriber.disconnect()) });
      const client = new LockClient(connect(server), { keyPrefix: prefix, subscriber });
      opened.push(client);
      return client;
    });
    const waiter = redLockOf(deafClients, 'deaf');
    expect(await holder.tryLock(0, 20_000)).toBe(true);
    const waiting = waiter.tryLock(10_000, 10_000);
    await sleep(300);
    const releasedAt = performance.now();
    await holder.unlock();
    expect(await waiting).toBe(true);
    // Retried after random delays of up to 2 × nodeTimeout, not after the holder's 20 s.
    expect(performance.now() - releasedAt).toBeLessThan(1_000);
    await waiter.unlock();
  });

  it('a fixed lease ends with the validity time: the lease signal aborts (expired)', async () => {
    const clients = clientsOnAllNodes();
    const lost: LockLostInfo[] = [];
    clients[0]!.on('lost', (info) => lost.push(info));
    const redLock = redLockOf(clients, 'validity');
    const started = performance.now();
    const lease = await redLock.acquire({ leaseTime: 300 });
    for (let i = 0; i < 40 && !lease.signal.aborted; i += 1) await sleep(10);
    const abortedAfter = performance.now() - started;
    // The node holds' clocks end at 300 − (3 + 25) ms drift after the round was sent, before
    // the keys expire: the majority's end is the RedLock's.
    expect(abortedAfter).toBeGreaterThanOrEqual(265);
    expect(abortedAfter).toBeLessThan(600);
    expect(lease.signal.reason).toMatchObject({ reason: 'expired' });
    expect(lost).toEqual([{ name: 'validity', owner: lease.owner, reason: 'expired' }]);
    await lease.release();
    expect(await settledKeys()).toEqual([[], [], [], [], []]);
  });

  it('closing a node client rejects calls; closing the first client stops renewal quietly', async () => {
    const clients = clientsOnAllNodes({ watchdogTimeout: 300 });
    const lost: LockLostInfo[] = [];
    clients[0]!.on('lost', (info) => lost.push(info));
    const redLock = redLockOf(clients, 'closing');
    await redLock.lock();
    await clients[0]!.close();
    await expect(redLock.tryLock()).rejects.toBeInstanceOf(LockClientClosedError);
    await expect(redLock.unlock()).rejects.toBeInstanceOf(LockClientClosedError);
    // Not renewed any more: the keys expire with the watchdog lease, and no loss is reported.
    expect(await settledKeys(undefined, 1_500)).toEqual([[], [], [], [], []]);
    expect(lost).toEqual([]);
  });
});

describe('RedLock: bad input → InvalidArgumentError before anything reaches Redis', () => {
  const conns: Redis[] = [];
  afterEach(() => {
    for (const conn of conns) {
      expect(conn.status).toBe('wait');
      conn.disconnect();
    }
    conns.length = 0;
  });
  // Never connected (lazyConnect); a distinct port per node, as distinct masters would have.
  let nextPort = 1;
  const lazy = (port = nextPort++): Redis => {
    const conn = new Redis({ lazyConnect: true, port, host: '127.0.0.1' });
    conns.push(conn);
    return conn;
  };
  const client = (redis = lazy()): LockClient => new LockClient(redis, { subscriber: lazy() });

  it('the locks', () => {
    const [a, b, c] = [client(), client(), client()];
    const make = (...args: unknown[]) => () => new RedLock(...(args as never[]));
    expect(make()).toThrow(/at least one lock/);
    expect(make({ nodeTimeout: 10 })).toThrow(/at least one lock/);
    expect(make(a.getLock('x'), 'x')).toThrow(/argument 2 is not a lock/);
    expect(make(a.getLock('x'), null)).toThrow(InvalidArgumentError);
    expect(make(a.getLock('x'), { getLock: 1 }, b.getLock('x'))).toThrow(/argument 2 is not a lock/);
    const lock = a.getLock('x');
    expect(make(lock, lock)).toThrow(/locks 1 and 2 are the same lock/);
    expect(make(a.getLock('x'), b.getLock('x'), a.getLock('y'))).toThrow(/locks 1 and 3 come from the same LockClient/);
    const shared = lazy();
    expect(make(client(shared).getLock('x'), client(shared).getLock('x'))).toThrow(/same Redis server/);
    const port = nextPort++;
    expect(make(client(lazy(port)).getLock('x'), client(lazy(port)).getLock('x'))).toThrow(/same Redis server \(127\.0\.0\.1:\d+\)/);
    const redLock = new RedLock(a.getLock('x'), b.getLock('x'));
    expect(make(redLock, c.getLock('x'))).toThrow(/argument 1 is not a lock/);
    // Sentinel-managed masters share the default host and port options: not taken for one server.
    const viaSentinel = (name: string): LockClient => {
      const conn = new Redis({ lazyConnect: true, sentinels: [{ host: '127.0.0.1', port: nextPort++ }], name });
      conns.push(conn);
      return client(conn);
    };
    expect(make(viaSentinel('m1').getLock('x'), viaSentinel('m2').getLock('x'))).not.toThrow();
    expect(new RedLock(a.getLock('x'), b.getLock('y'), c.getLock('x')).name).toBe('x,y');
  });

  it('the options', () => {
    const [a, b] = [client().getLock('x'), client().getLock('x')];
    const make = (options: unknown) => () => new RedLock(a, b, options as RedLockOptions);
    expect(make({ nodeTimeot: 10 })).toThrow(/unknown option `nodeTimeot`/);
    for (const bad of [0, -1, Number.NaN, Infinity, '50']) expect(make({ nodeTimeout: bad })).toThrow(/`nodeTimeout`/);
    for (const bad of [-1, 1.5, '3', Infinity]) expect(make({ maxRenewals: bad })).toThrow(/`maxRenewals`/);
    expect(make({ nodeTimeout: 5, maxRenewals: 0 })).not.toThrow();
  });

  it('the calls', async () => {
    const redLock = new RedLock(client().getLock('x'), client().getLock('x'), client().getLock('x'));
    await expect(redLock.tryLock(-1)).rejects.toThrow(/`waitTime`/);
    await expect(redLock.tryLock({ leaseTime: 0 })).rejects.toThrow(/`leaseTime`/);
    await expect(redLock.lock(2 ** 31)).rejects.toThrow(InvalidArgumentError);
    await expect(redLock.acquire({ waitTime: Number.NaN })).rejects.toThrow(InvalidArgumentError);
    await expect(redLock.withLock('fn' as never)).rejects.toThrow(/`fn`/);
    await expect(redLock.tryLock(10, 10_000, { signal: 'x' as never })).rejects.toThrow(/`signal`/);
    expect(await redLock.tryLock(0, 10_000, { signal: AbortSignal.abort(new Error('stop')) }).catch((e: unknown) => e)).toMatchObject({
      message: 'stop',
    });
  });
});
