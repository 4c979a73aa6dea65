import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { cliCommand, spawnRedis, type SpawnedRedis } from './redis-server.js';

/** A Redis Cluster this run started itself: `masters` masters, each with `replicasPerMaster` replicas. */
export interface SpawnedCluster {
  readonly nodes: readonly SpawnedRedis[];
  /** Startup nodes for an ioredis Cluster. */
  readonly startupNodes: { host: string; port: number }[];
  /** Waits until every live node reports cluster_state:ok and every slot has a live master. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** The node currently serving `slot` as master. */
  masterOf(slot: number): Promise<SpawnedRedis>;
  stop(): Promise<void>;
}

async function clusterInfo(port: number): Promise<string> {
  const conn = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  conn.on('error', () => undefined);
  try {
    await conn.connect();
    return (await conn.call('CLUSTER', 'INFO')) as string;
  } catch {
    return '';
  } finally {
    conn.disconnect();
  }
}

/** Waits until every replica reports its link to the master up. */
async function waitReplicasInSync(nodes: readonly SpawnedRedis[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const node of nodes) {
    const conn = new Redis({ port: node.port, host: '127.0.0.1' });
    conn.on('error', () => undefined);
    try {
      for (;;) {
        const info = await conn.info('replication');
        if (info.includes('role:master') || info.includes('master_link_status:up')) break;
        if (Date.now() > deadline) throw new Error(`replica on port ${node.port} did not sync in time`);
        await sleep(50);
      }
    } finally {
      conn.disconnect();
    }
  }
}

/**
 * Spawns `masters × (1 + replicasPerMaster)` cluster-enabled redis-servers on free loopback
 * ports and joins them with `redis-cli --cluster create` (valkey-cli beside a valkey-server). A
 * short node timeout makes failover take about a second.
 */
export async function spawnCluster(masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 1_000): Promise<SpawnedCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'rlock-cluster-'));
  const count = masters * (1 + replicasPerMaster);
  const nodes: SpawnedRedis[] = [];
  try {
    for (let i = 0; i < count; i += 1) {
      nodes.push(
        await spawnRedis([
          '--cluster-enabled', 'yes',
          '--cluster-config-file', join(dir, `nodes-${i}.conf`),
          '--cluster-node-timeout', String(nodeTimeoutMs),
          // Replicas sync at once (the default waits 5 s for more replicas): a replica that
          // never synced cannot take over, so failover tests need them in sync from the start.
          '--repl-diskless-sync-delay', '0',
          '--dir', dir,
        ]),
      );
    }
    const created = spawnSync(
      cliCommand(),
      ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (created.status !== 0) throw new Error(`${cliCommand()} --cluster create failed: ${created.stdout}${created.stderr}`);
  } catch (error) {
    for (const node of nodes) await node.stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  const ping = async (port: number): Promise<boolean> => {
    const conn = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    conn.on('error', () => undefined);
    try {
      await conn.connect();
      return (await conn.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      conn.disconnect();
    }
  };

  /** Every live node says cluster_state:ok and every slot's master answers PING. */
  const healthy = async (): Promise<boolean> => {
    const live = (await Promise.all(nodes.map(async (n) => ((await ping(n.port)) ? n : undefined)))).filter(
      (n): n is SpawnedRedis => n !== undefined,
    );
    if (live.length === 0) return false;
    const infos = await Promise.all(live.map((n) => clusterInfo(n.port)));
    if (!infos.every((info) => info.includes('cluster_state:ok'))) return false;
    const livePorts = new Set(live.map((n) => n.port));
    const conn = new Redis({ port: live[0]!.port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
    conn.on('error', () => undefined);
    try {
      await conn.connect();
      const shards = (await conn.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const covered = shards.reduce((sum, [from, to]) => sum + (to - from + 1), 0);
      return covered === 16_384 && shards.every(([, , master]) => livePorts.has(master[1]));
    } catch {
      return false;
    } finally {
      conn.disconnect();
    }
  };

  const waitHealthy = async (timeoutMs = 20_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!(await healthy())) {
      if (Date.now() > deadline) throw new Error('cluster did not become healthy in time');
      await sleep(100);
    }
  };

  const masterOf = async (slot: number): Promise<SpawnedRedis> => {
    for (const node of nodes) {
      const conn = new Redis({ port: node.port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      conn.on('error', () => undefined);
      try {
        await conn.connect();
        const shards = (await conn.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string]][];
        for (const [from, to, master] of shards) {
          if (slot >= from && slot <= to) return nodes.find((n) => n.port === master[1])!;
        }
      } catch {
        // a dead node: ask the next one
      } finally {
        conn.disconnect();
      }
    }
    throw new Error(`no master found for slot ${slot}`);
  };

  await waitHealthy();
  await waitReplicasInSync(nodes);
  return {
    nodes,
    startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    waitHealthy,
    masterOf,
    stop: async () => {
      for (const node of nodes) await node.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
