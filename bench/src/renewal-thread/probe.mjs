// Scenario 9's probe (bench/src/scenarios/renewal-thread.ts): one LockClient on ioredis, with or
// without `renewalThread`, in a fresh process, watched from outside: rlock's public API (events,
// acquire/release) and the thread's connect module (connect.mjs), which is the application's code.
// Prints one line of JSON (ProbeResult in the scenario). Plain JavaScript, run by plain node: a
// Worker inherits its parent's --import, and tsx would add its own start-up and memory to the
// thread's.
//   node --expose-gc bench/src/renewal-thread/probe.mjs '{"url":"redis://…","thread":true,"holds":1000,…}'
// Phases, in this order:
//   startup  new LockClient (watchdogTimeout `leaseMs`) and a watchdog-mode acquire at once; the
//            time to the first `renewed` event, and with the thread to the first renewal the
//            thread made (its first script call, seen by the connect module, then the `renewed`
//            event that follows it);
//   memory   that hold released, the client idle for `idleMs`, two full GCs: process.memoryUsage();
//   renew    `holds` watchdog-mode holds on the same client, renewed every leaseMs / 3; over
//            `windowMs`: process CPU (every thread), the main thread's and the renewal thread's
//            CPU (Linux schedstat), the `renewed` events, the commands each connection sent, and
//            the server's CPU and commands (INFO, over a connection of its own);
//   held     a new client with a lease of `heldLeaseMs` (no renewal falls in the window): the same
//            holds, the CPU of holding them over `heldWindowMs`.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { URL, URLSearchParams } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { LockClient } from '../../../dist/index.js';

/** The longest the start-up waits for a renewal, ms. */
const STARTUP_TIMEOUT_MS = 5_000;
/** The key prefix of the probe's locks. */
const KEY_PREFIX = 'bench-rt';
/** The thread's maxStall: far above any pause of this process (the lease is short). */
const MAX_STALL_MS = 10_000;

const config = JSON.parse(process.argv[2] ?? '{}');
const { url, thread, holds, leaseMs, windowMs, heldLeaseMs, heldWindowMs, idleMs } = config;

/** Absolute ms, comparable across threads. */
const now = () => performance.timeOrigin + performance.now();

/** CPU time a thread of this process ran, µs (Linux schedstat), or NaN. */
function threadCpuUs(tid) {
  if (tid === null || tid === undefined) return Number.NaN;
  try {
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1_000;
  } catch {
    return Number.NaN;
  }
}

async function until(predicate, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) return false;
    await sleep(2);
  }
  return true;
}

/** A connected ioredis client whose commands are counted by name (as bench/src/connections.ts does). */
async function counted(sent) {
  const redis = new Redis(url, { lazyConnect: true });
  redis.on('error', () => undefined);
  await redis.connect();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    sent.set(command.name, (sent.get(command.name) ?? 0) + 1);
    return send(command, stream);
  };
  return redis;
}

/** The server's CPU (s) and calls per command (INFO excluded). */
async function serverStats(admin) {
  const [cpu, commandstats] = await Promise.all([admin.info('cpu'), admin.info('commandstats')]);
  const field = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(cpu)?.[1]);
  const calls = {};
  for (const match of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (match[1] !== 'info') calls[match[1]] = Number(match[2]);
  }
  return { cpuS: field('used_cpu_user') + field('used_cpu_sys'), calls };
}

function difference(after, before) {
  const delta = {};
  for (const [name, count] of Object.entries(after)) {
    const diff = count - (before[name] ?? 0);
    if (diff > 0) delta[name] = diff;
  }
  return delta;
}

// What the thread's connect module says (connect.mjs); nothing arrives without the thread.
const channelName = `rlock-bench-renewal-thread-${process.pid}`;
const fromThread = { called: [], connected: [], tid: null, sent: {}, scripts: [] };
const channel = new BroadcastChannel(channelName);
channel.unref();
channel.onmessage = ({ data }) => {
  if (data.type === 'called') {
    fromThread.called.push(data.at);
    fromThread.tid = data.tid;
  } else if (data.type === 'connected') {
    fromThread.connected.push(data.at);
  } else if (data.type === 'sent') {
    fromThread.sent[data.name] = (fromThread.sent[data.name] ?? 0) + 1;
    if (data.name === 'evalsha' || data.name === 'eval') fromThread.scripts.push(data.at);
  }
};
const connectModule = new URL(`./connect.mjs?${new URLSearchParams({ url, channel: channelName })}`, import.meta.url);

const sentMain = new Map();
const redis = await counted(sentMain);
const subscriber = await counted(sentMain);
const admin = new Redis(url);
const errors = [];
let lost = 0;
/** Holds lost, by `phase:reason`. */
const lostBy = {};
let phase = 'startup';
let renewedCount = 0;
const renewedAt = [];

/** A LockClient as the scenario compares them: the thread on or off, nothing else different. */
function makeClient(watchdogTimeout) {
  const client = new LockClient(redis, {
    keyPrefix: KEY_PREFIX,
    subscriber,
    watchdogTimeout,
    ...(thread ? { renewalThread: { connect: connectModule, maxStall: Math.max(MAX_STALL_MS, 3 * watchdogTimeout) } } : {}),
  });
  client.on('renewed', () => {
    renewedCount += 1;
    if (renewedAt.length < 100) renewedAt.push(now());
  });
  client.on('lost', ({ reason }) => {
    lost += 1;
    lostBy[`${phase}:${reason}`] = (lostBy[`${phase}:${reason}`] ?? 0) + 1;
  });
  client.on('error', (error) => void errors.push(String(error)));
  return client;
}

/** Resolves once the thread's connection is ready (at once without the thread). */
async function threadUp() {
  const connectedBefore = fromThread.connected.length;
  if (thread && !(await until(() => fromThread.connected.length > connectedBefore, STARTUP_TIMEOUT_MS))) {
    throw new Error('the renewal thread did not connect');
  }
}

/** The CPU and work over `ms` ms (the server's INFO read outside the client's CPU window). */
async function measure(ms) {
  const mainTid = process.pid;
  const serverBefore = await serverStats(admin);
  const before = {
    at: performance.now(),
    cpu: process.cpuUsage(),
    main: threadCpuUs(mainTid),
    thread: threadCpuUs(fromThread.tid),
    renewed: renewedCount,
    sentMain: Object.fromEntries(sentMain),
    sentThread: { ...fromThread.sent },
  };
  await sleep(ms);
  const cpu = process.cpuUsage(before.cpu);
  const main = threadCpuUs(mainTid) - before.main;
  const threadUs = threadCpuUs(fromThread.tid) - before.thread;
  const renewals = renewedCount - before.renewed;
  const elapsedMs = performance.now() - before.at;
  const server = await serverStats(admin);
  return {
    elapsedMs,
    renewals,
    processUs: cpu.user + cpu.system,
    mainUs: main,
    threadUs: thread ? threadUs : 0,
    sentMain: difference(Object.fromEntries(sentMain), before.sentMain),
    sentThread: difference(fromThread.sent, before.sentThread),
    serverCalls: difference(server.calls, serverBefore.calls),
    serverCpuUs: (server.cpuS - serverBefore.cpuS) * 1e6,
  };
}

async function takeHolds(client, prefix) {
  return Promise.all(Array.from({ length: holds }, (_, i) => client.getLock(`${prefix}:${i}`).acquire()));
}

const result = { thread, startup: {}, memory: {}, renew: {}, held: {}, lost: 0, lostBy, errors };
try {
  await admin.ping();
  // start-up
  const startedAt = now();
  const client = makeClient(leaseMs);
  const constructedAt = now();
  const lease = await client.getLock('startup').acquire();
  const acquiredAt = now();
  const renewedByThread = () => {
    const firstScript = fromThread.scripts[0];
    return firstScript === undefined ? undefined : renewedAt.find((at) => at > firstScript);
  };
  await until(() => renewedAt.length > 0 && (!thread || renewedByThread() !== undefined), STARTUP_TIMEOUT_MS);
  const since = (at) => (at === undefined ? null : at - startedAt);
  result.startup = {
    constructMs: constructedAt - startedAt,
    acquireMs: acquiredAt - startedAt,
    threadCalledMs: since(fromThread.called[0]),
    threadUpMs: since(fromThread.connected[0]),
    firstRenewalMs: since(renewedAt[0]),
    threadFirstScriptMs: since(fromThread.scripts[0]),
    threadRenewalMs: thread ? since(renewedByThread()) : null,
  };
  await lease.release();

  // memory
  phase = 'memory';
  await sleep(idleMs);
  globalThis.gc?.();
  globalThis.gc?.();
  result.memory = process.memoryUsage();

  // renew: holds renewed every lease / 3
  phase = 'renew';
  const leases = await takeHolds(client, 'renew');
  // Every hold renewed at least once, by whichever renews it now, before the window.
  await sleep(leaseMs);
  result.renew = { holds, leaseMs, ...(await measure(windowMs)) };
  await Promise.all(leases.map((held) => held.release()));
  const closing = performance.now();
  await client.close();
  result.closeMs = performance.now() - closing;

  // held: a long lease, no renewal due in the window
  phase = 'held';
  const heldClient = makeClient(heldLeaseMs);
  await threadUp();
  const heldLeases = await takeHolds(heldClient, 'held');
  await sleep(300);
  result.held = { holds, leaseMs: heldLeaseMs, ...(await measure(heldWindowMs)) };
  await Promise.all(heldLeases.map((held) => held.release()));
  await heldClient.close();
} finally {
  result.lost = lost;
  channel.close();
  redis.disconnect();
  subscriber.disconnect();
  admin.disconnect();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
