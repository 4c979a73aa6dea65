import { Redis as IoRedis } from 'ioredis';
import { Redis as ValkeyRedis } from 'iovalkey';
import { createClient } from 'redis';
import type { RedisConnection } from '../../lib/index.js';
import type { TortureClient } from './args.js';

/** A worker's connection through a fault proxy, on the client the run was asked for. */
export interface TortureConnection {
  readonly connection: RedisConnection;
  /** Resolves once the connection answers (or failed to). */
  ping(): Promise<void>;
  close(): void;
}

/** Reconnects quickly, retries calls a dropped connection left unanswered: as an application configures it. */
export function openConnection(client: TortureClient, url: string): TortureConnection {
  if (client === 'node-redis') {
    const conn = createClient({ url, socket: { reconnectStrategy: (retries) => Math.min(25 * (retries + 1), 300) } });
    conn.on('error', () => undefined);
    const connecting = conn.connect().catch(() => undefined);
    return {
      connection: conn,
      ping: async () => {
        await connecting;
        await conn.sendCommand(['PING']).catch(() => undefined);
      },
      close: () => void conn.destroy(),
    };
  }
  const Ctor = client === 'iovalkey' ? ValkeyRedis : IoRedis;
  const conn = new Ctor(url, { retryStrategy: (times: number) => Math.min(25 * times, 300), maxRetriesPerRequest: 20 });
  conn.on('error', () => undefined);
  return {
    connection: conn,
    ping: async () => void (await conn.ping().catch(() => undefined)),
    close: () => conn.disconnect(),
  };
}
