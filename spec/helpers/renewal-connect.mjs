// The `renewalThread.connect` module of the specs: its URL's query names the client family and
// the server (`?family=ioredis&url=redis://127.0.0.1:6380`, or a Cluster's seeds
// `&cluster=127.0.0.1:7000,127.0.0.1:7001`; optionally `&prefix=`, `&exitAfter=` ms, after which
// the thread exits, as a crashed one would, `&fail=1`: the module throws, and `&ready=<key>`: once
// connected, the module sets that key for 60 s, so a spec knows the thread is up). Plain JavaScript: the thread loads
// it without the specs' TypeScript transform.
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { URL } from 'node:url';

const query = new URL(import.meta.url).searchParams;
const family = query.get('family');
const url = query.get('url');

export default async function connect() {
  const client = await open();
  const ready = query.get('ready');
  if (ready !== null) await markReady(client, ready);
  return client;
}

/** Sets `key` through the client just made, whatever its family. */
async function markReady(client, key) {
  if (typeof client.customCommand === 'function') await client.customCommand(['SET', key, '1', 'PX', '60000']);
  else if (typeof client.sendCommand === 'function' && typeof client.call !== 'function') await client.sendCommand(['SET', key, '1', 'PX', '60000']);
  else await client.call('SET', key, '1', 'PX', '60000');
}

async function open() {
  const exitAfter = query.get('exitAfter');
  if (exitAfter !== null) setTimeout(() => process.exit(7), Number(exitAfter));
  if (query.get('fail') !== null) throw new Error('this connect module fails on purpose');
  const cluster = query.get('cluster');
  if (cluster !== null) return connectCluster(cluster.split(',').map((seed) => ({ host: seed.split(':')[0], port: Number(seed.split(':')[1]) })));
  if (family === 'ioredis' || family === 'iovalkey') {
    const { Redis } = await import(family);
    const keyPrefix = query.get('prefix') ?? undefined;
    return new Redis(url, { keyPrefix });
  }
  if (family === 'node-redis' || family === 'node-redis-resp3') {
    const { createClient } = await import('redis');
    return createClient({ url, RESP: family === 'node-redis-resp3' ? 3 : 2 }).connect();
  }
  if (family === 'glide') {
    const { GlideClient } = await import('@valkey/valkey-glide');
    const { hostname, port } = new URL(url);
    return GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }] });
  }
  throw new Error(`renewal-connect: unknown family ${family}`);
}

/** A Cluster client of the family on `seeds`. */
async function connectCluster(seeds) {
  if (family === 'ioredis' || family === 'iovalkey') {
    const { Cluster } = await import(family);
    return new Cluster(seeds);
  }
  if (family === 'node-redis' || family === 'node-redis-resp3') {
    const { createCluster } = await import('redis');
    const rootNodes = seeds.map(({ host, port }) => ({ url: `redis://${host}:${port}` }));
    return createCluster({ rootNodes, RESP: family === 'node-redis-resp3' ? 3 : 2 }).connect();
  }
  if (family === 'glide') {
    const { GlideClusterClient } = await import('@valkey/valkey-glide');
    return GlideClusterClient.createClient({ addresses: seeds });
  }
  throw new Error(`renewal-connect: unknown family ${family}`);
}
