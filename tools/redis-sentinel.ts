import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { spawnRedis, type SpawnedRedis } from './redis-server.js';

/** A master, one replica and three Sentinels this run started itself. */
export interface SpawnedSentinelSet {
  /** The master's name the Sentinels monitor. */
  readonly name: string;
  readonly master: SpawnedRedis;
  readonly replica: SpawnedRedis;
  readonly sentinels: readonly SpawnedRedis[];
  /** For ioredis: `new Redis({ sentinels, name })`. */
  readonly sentinelNodes: { host: string; port: number }[];
  /** The port the Sentinels name as master now. */
  masterPort(): Promise<number>;
  /** Waits until the Sentinels name a master other than `oldPort`. */
  waitFailover(oldPort: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

async function ask<T>(port: number, ...args: (string | number)[]): Promise<T> {
  const conn = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  conn.on('error', () => undefined);
  try {
    await conn.connect();
    return (await conn.call(...(args as [string, ...(string | number)[]]))) as T;
  } finally {
    conn.disconnect();
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen in time`);
    await sleep(50);
  }
}

/**
 * Spawns a master, a replica of it and three Sentinels (quorum 2, master down after 1 s) on
 * free loopback ports, and waits until the Sentinels know the replica and each other, so a
 * failover can be authorised.
 */
export async function spawnSentinelSet(name = 'rlock-master'): Promise<SpawnedSentinelSet> {
  const dir = await mkdtemp(join(tmpdir(), 'rlock-sentinel-'));
  const started: SpawnedRedis[] = [];
  try {
    const master = await spawnRedis(['--repl-diskless-sync-delay', '0']);
    started.push(master);
    const replica = await spawnRedis(['--replicaof', '127.0.0.1', String(master.port)]);
    started.push(replica);
    await until(
      async () => (await ask<string>(replica.port, 'INFO', 'replication')).includes('master_link_status:up'),
      20_000,
      'replica sync',
    );
    const sentinels: SpawnedRedis[] = [];
    for (let i = 0; i < 3; i += 1) {
      const configFile = join(dir, `sentinel-${i}.conf`);
      await writeFile(
        configFile,
        [
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 3000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      const sentinel = await spawnRedis([], { configFile, sentinel: true });
      started.push(sentinel);
      sentinels.push(sentinel);
    }
    for (const sentinel of sentinels) {
      await until(
        async () =>
          (await ask<unknown[]>(sentinel.port, 'SENTINEL', 'REPLICAS', name)).length === 1 &&
          (await ask<unknown[]>(sentinel.port, 'SENTINEL', 'SENTINELS', name)).length === 2,
        20_000,
        'sentinel discovery',
      );
    }
    const masterPort = async (): Promise<number> => {
      const [, port] = await ask<[string, string]>(sentinels[0]!.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name);
      return Number(port);
    };
    return {
      name,
      master,
      replica,
      sentinels,
      sentinelNodes: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
      masterPort,
      waitFailover: async (oldPort, timeoutMs = 20_000) => {
        let now = oldPort;
        await until(
          async () => {
            now = await masterPort();
            return now !== oldPort && (await ask<string[]>(now, 'ROLE'))[0] === 'master';
          },
          timeoutMs,
          'failover',
        );
        return now;
      },
      stop: async () => {
        for (const server of started.reverse()) await server.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const server of started.reverse()) await server.stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
