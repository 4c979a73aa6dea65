// The renewal thread's program (a worker_threads Worker a LockClient starts with `renewalThread`):
// connects with the application's module, checks the connection matches the main one, then
// renews what the main thread hands it (thread-renewer.ts) until told to close.
import { parentPort, workerData } from 'node:worker_threads';
import { redisPortOf } from '../redis/detect.js';
import type { RedisPort } from '../redis/port.js';
import { RenewalScripts } from '../scripts/renewal-scripts.js';
import { ScriptRunner } from '../scripts/script-runner.js';
import type { FromThread, RenewalThreadData, ToThread } from './protocol.js';
import { ThreadRenewer } from './thread-renewer.js';

const data = workerData as RenewalThreadData;
const port = parentPort!;
const post = (message: FromThread): void => port.postMessage(message);

/** The application's module's client, as a port; rejects with what is wrong with it. */
async function connect(): Promise<{ redis: RedisPort; close: () => Promise<unknown> }> {
  const module = (await import(data.connect)) as { default?: unknown };
  if (typeof module.default !== 'function') throw new Error(`renewalThread.connect: ${data.connect} has no default export that is a function`);
  const connection: unknown = await (module.default as () => unknown)();
  const redis = redisPortOf(connection, 'renewalThread.connect()');
  const mismatch =
    redis.keyPrefix !== data.keyPrefix
      ? `its key prefix is ${JSON.stringify(redis.keyPrefix)}, the LockClient's connection's ${JSON.stringify(data.keyPrefix)}`
      : redis.db !== data.db
        ? `it selects database ${redis.db}, the LockClient's connection ${data.db}`
        : (redis.deployment === 'cluster') !== data.cluster
          ? `it is ${redis.deployment === 'cluster' ? '' : 'not '}a Cluster client, the LockClient's connection is${data.cluster ? '' : ' not'}`
          : undefined;
  const close = (): Promise<unknown> => endConnection(redis.connection);
  if (mismatch !== undefined) {
    await close().catch(() => undefined);
    throw new Error(`renewalThread.connect() returned a client that does not match the LockClient's connection: ${mismatch}`);
  }
  return { redis, close };
}

/** Ends the client the module made: QUIT on ioredis, iovalkey and node-redis, close() on GLIDE. */
function endConnection(connection: object): Promise<unknown> {
  const client = connection as { quit?: () => unknown; close?: () => unknown };
  if (typeof client.quit === 'function') return Promise.resolve(client.quit());
  return Promise.resolve(client.close?.());
}

let renewer: ThreadRenewer | undefined;
const early: ToThread[] = [];
let closing: Promise<unknown> | undefined;
let closeConnection: (() => Promise<unknown>) | undefined;

const finish = async (): Promise<void> => {
  renewer?.close();
  await closeConnection?.().catch(() => undefined);
  post({ type: 'closed' });
  port.close();
};

port.on('message', (message: ToThread) => {
  if (message.type === 'close') {
    closing ??= finish();
    return;
  }
  if (renewer) renewer.receive(message);
  else early.push(message);
});

try {
  const { redis, close } = await connect();
  closeConnection = close;
  if (closing) {
    await close().catch(() => undefined);
  } else {
    renewer = new ThreadRenewer(data, new RenewalScripts(new ScriptRunner(redis)), post);
    for (const message of early.splice(0)) renewer.receive(message);
    renewer.start();
    post({ type: 'ready' });
  }
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  port.close();
}
