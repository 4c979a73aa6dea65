// The `renewalThread.connect` module of the specs: its URL's query names the client family and
// the server (`?family=ioredis&url=redis://127.0.0.1:6380`, optionally `&prefix=` and `&exitAfter=`
// ms, after which the thread exits, as a crashed one would). Plain JavaScript: the thread loads
// it without the specs' TypeScript transform.
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { URL } from 'node:url';

const query = new URL(import.meta.url).searchParams;
const family = query.get('family');
const url = query.get('url');

export default async function connect() {
  const exitAfter = query.get('exitAfter');
  if (exitAfter !== null) setTimeout(() => process.exit(7), Number(exitAfter));
  if (query.get('fail') !== null) throw new Error('this connect module fails on purpose');
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
