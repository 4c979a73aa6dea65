// The `renewalThread.connect` module of the torture workers' LockClients (stall.ts), bundled by
// renewal.ts and run in the renewal thread, which has no TypeScript loader. Its URL's query names
// the connection: `?client=ioredis&url=redis://…&ownRetries=1&channel=…`. The thread connects as
// the LockClient does (the options of client-options.ts, the credentials in the URL) and through
// the same fault proxy: the thread is part of the client, so a partition, a reset, a swallowed
// reply or a refusal of scripts that hits the client hits its renewals too. It loads only the
// client package it uses (node-redis alone takes half a second to load). Once connected (or its
// start-up ping gave up) it says so on the BroadcastChannel `channel`, just after the thread's
// program starts renewing.
import { BroadcastChannel } from 'node:worker_threads';
import { CLIENTS, type TortureClient } from './args.js';
import { ioredisOptions, nodeRedisOptions } from './client-options.js';

/** As the worker's start-up ping (connections.ts): a swallowed reply must not hold the thread forever, ms. */
const PING_WAIT_MS = 3_000;

async function open(client: TortureClient, url: string, ownRetries: boolean): Promise<{ connection: unknown; ping: () => Promise<unknown> }> {
  if (client === 'node-redis') {
    const { createClient } = await import('redis');
    const conn = createClient(nodeRedisOptions(url, { ownRetries }));
    conn.on('error', () => undefined);
    const connecting = conn.connect();
    return { connection: conn, ping: () => connecting.then(() => conn.sendCommand(['PING'])) };
  }
  const { Redis } = client === 'iovalkey' ? await import('iovalkey') : await import('ioredis');
  const conn = new Redis(url, ioredisOptions({ ownRetries }));
  conn.on('error', () => undefined);
  return { connection: conn, ping: () => conn.ping() };
}

export default async function connect(): Promise<unknown> {
  const query = new URL(import.meta.url).searchParams;
  const client = query.get('client') as TortureClient;
  const url = query.get('url');
  if (!CLIENTS.includes(client) || url === null) throw new Error(`renewal-connect: bad query ${query.toString()}`);
  const { connection, ping } = await open(client, url, query.get('ownRetries') === '1');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ping().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, PING_WAIT_MS)))]);
  clearTimeout(timer);
  const name = query.get('channel');
  if (name !== null) {
    // After this module's caller (worker-main.ts) started renewing: it does so as soon as this returns.
    setTimeout(() => {
      const channel = new BroadcastChannel(name);
      channel.postMessage('up');
      setTimeout(() => channel.close(), 1_000).unref();
    }, 0);
  }
  return connection;
}
