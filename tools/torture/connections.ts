import { Redis as IoRedis } from 'ioredis';
import { Redis as ValkeyRedis } from 'iovalkey';
import { createClient } from 'redis';
import type { RedisConnection } from '../../lib/index.js';
import type { TortureClient } from './args.js';
import { ioredisOptions, nodeRedisOptions } from './client-options.js';
import type { ClientSetup } from './events.js';

/** A worker's connection through a fault proxy, on the client the run was asked for. */
export interface TortureConnection {
  readonly connection: RedisConnection;
  /** Resolves once the connection answers, failed to, or {@link PING_WAIT_MS} passed. */
  ping(): Promise<void>;
  close(): void;
}

/**
 * A worker's start-up ping is bounded: a swallow fault armed for an earlier incarnation of the
 * worker can eat its reply on a connection that stays open, and an unbounded ping then never
 * lets the worker start, nor stop when asked.
 */
const PING_WAIT_MS = 3_000;

const bounded = (ping: Promise<unknown>): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, PING_WAIT_MS);
    void ping.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Reconnects quickly and, as an application configures it, resends calls a dropped connection
 * left unanswered; with `setup.ownRetries` such calls fail at once instead (ioredis
 * `maxRetriesPerRequest: 0`, node-redis `disableOfflineQueue`), and rlock retries a release
 * itself. `url` carries the ACL user's credentials when the client connects as that user.
 */
export function openConnection(client: TortureClient, url: string, setup: ClientSetup): TortureConnection {
  if (client === 'node-redis') {
    const conn = createClient(nodeRedisOptions(url, setup));
    conn.on('error', () => undefined);
    const connecting = conn.connect().catch(() => undefined);
    return {
      connection: conn,
      ping: () => bounded(connecting.then(() => conn.sendCommand(['PING'])).catch(() => undefined)),
      close: () => void conn.destroy(),
    };
  }
  const Ctor = client === 'iovalkey' ? ValkeyRedis : IoRedis;
  const conn = new Ctor(url, ioredisOptions(setup));
  conn.on('error', () => undefined);
  return {
    connection: conn,
    ping: () => bounded(conn.ping().catch(() => undefined)),
    close: () => conn.disconnect(),
  };
}
