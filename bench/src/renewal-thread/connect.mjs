// The `renewalThread.connect` module of scenario 9's probe (probe.mjs): an ioredis client to the
// URL's `?url=`, as an application would write it, that also tells the probe's main thread, over
// the BroadcastChannel named `?channel=`, when the thread called it, its thread id (for the
// thread's CPU time), when the connection was ready, and each command it sent. This is how the
// probe sees the thread from outside rlock: a connect module is the application's code.
// Plain JavaScript: the probe runs without a TypeScript loader.
import { readlinkSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { URL } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';

const query = new URL(import.meta.url).searchParams;

/** Absolute ms, comparable across threads. */
const now = () => performance.timeOrigin + performance.now();

/** This thread's id (Linux), or null. */
function threadId() {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return null;
  }
}

export default async function connect() {
  const calledAt = now();
  const channel = new BroadcastChannel(query.get('channel'));
  channel.unref();
  channel.postMessage({ type: 'called', at: calledAt, tid: threadId() });
  // Loaded here, not at the top: the client library's load is part of the thread's start-up.
  const { Redis } = await import('ioredis');
  const redis = new Redis(query.get('url'));
  redis.once('ready', () => channel.postMessage({ type: 'connected', at: now() }));
  // Every command ioredis writes goes through sendCommand (see bench/src/connections.ts).
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    channel.postMessage({ type: 'sent', name: command.name, at: now() });
    return send(command, stream);
  };
  return redis;
}
