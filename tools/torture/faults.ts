/**
 * The fault injector: the run's redis-servers, one fault proxy per (client, server), the worker
 * processes, and the faults of the schedule applied to them. It logs when each fault really
 * began and ended, which the checker needs (freezes, kills, restarts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { startFaultProxy, type FaultProxy } from '../fault-proxy.js';
import { spawnRedis, type SpawnedRedis } from '../redis-server.js';
import type { Kind, TortureClient } from './args.js';
import { now, type ClientSetup, type WorkerConfig, type WorkerEvent } from './events.js';
import { clientSetups, workerSeed, type Fault, type ProxyTarget, type ServerId } from './schedule.js';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** A fault as it happened: wall-clock ms (see events.now) of its beginning and end. */
export interface FaultRecord {
  readonly fault: Fault;
  readonly start: number;
  end: number | undefined;
  /** What went wrong applying it (the fault is then not counted). */
  error?: string;
}

/** Every event a worker sent, tagged with the worker and its incarnation. */
export interface TaggedEvent {
  readonly worker: number;
  readonly incarnation: number;
  readonly event: WorkerEvent;
}

export interface RigOptions {
  readonly seed: number;
  readonly kinds: readonly Kind[];
  readonly processes: number;
  readonly clients: number;
  readonly actorsPerClient: number;
  readonly keyPrefix: string;
  readonly client: TortureClient;
  readonly onEvent: (event: TaggedEvent) => void;
  /** A worker incarnation is gone: killed (at the moment the signal was sent) or exited. */
  readonly onExit: (worker: number, incarnation: number, t: number, killed: boolean) => void;
  /** Where faults are logged as they happen (shared with the checker). */
  readonly log: FaultRecord[];
  /** The renewal threads' program and connect module (renewal.ts). */
  readonly renewal: WorkerConfig['renewal'];
  /** Whether some clients run a renewal thread (and stall). */
  readonly threads: boolean;
}

interface WorkerSlot {
  proc: ChildProcess | undefined;
  incarnation: number;
  /** A fault is about to kill it or has frozen it: its exit is no surprise. */
  exitExpected: boolean;
  /** When a fault sent it SIGKILL. */
  killedAt: number | undefined;
  done: Promise<void> | undefined;
  /** What it said it was still doing, asked to stop and not done yet (a 'stuck' event). */
  stuck?: string;
}

export const proxyKey = (p: ProxyTarget): string => `${p.worker}/${p.client}/${p.server}`;

/**
 * The ACL user some clients connect as (ClientSetup.acl): every command, key and channel. Each
 * server is started with it (so a restart brings it back, scripts allowed); the
 * `refuse-scripts` fault takes its scripts away for a while.
 */
export const ACL_USER = 'torture';
const ACL_PASSWORD = 'torture-pw';
const ACL_ARGS = ['--user', ACL_USER, 'on', `>${ACL_PASSWORD}`, '~*', '&*', '+@all'];

/** `url` (`redis://127.0.0.1:<port>`) with the ACL user's credentials. */
function asAclUser(url: string): string {
  return url.replace('redis://', `redis://${ACL_USER}:${ACL_PASSWORD}@`);
}

/** The server names of a run: `main` for every kind but RedLock, five masters for RedLock. */
export function serversFor(kinds: readonly Kind[]): ServerId[] {
  return [...(kinds.some((kind) => kind !== 'redlock') ? ['main' as const] : []), ...(kinds.includes('redlock') ? [0, 1, 2, 3, 4] : [])];
}

async function portClosed(port: number): Promise<boolean> {
  const socket = new Socket();
  try {
    socket.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return false;
  } catch {
    return true;
  } finally {
    socket.destroy();
  }
}

export class Rig {
  readonly servers = new Map<ServerId, SpawnedRedis>();
  readonly proxies = new Map<string, FaultProxy>();
  readonly log: FaultRecord[];
  /** Unexpected worker exits (a crash is a finding, not a fault). */
  readonly crashes: string[] = [];
  /** How each worker's clients connect, from the seed. */
  readonly setups: ClientSetup[][];
  readonly #options: RigOptions;
  /** Connections to the servers for the refusals (as the default user). */
  readonly #admins = new Map<ServerId, Redis>();
  readonly #workers: WorkerSlot[] = [];
  readonly #pending = new Set<Promise<void>>();
  #closing = false;

  constructor(options: RigOptions) {
    this.#options = options;
    this.log = options.log;
    this.setups = clientSetups(options.seed, options.processes, options.clients, options.threads);
  }

  get serverIds(): ServerId[] {
    return [...this.servers.keys()];
  }

  async start(): Promise<void> {
    const { kinds, processes, clients } = this.#options;
    // AOF with fsync on every write, so a crash (SIGKILL) loses nothing that was confirmed; a
    // restart without persistence is a stop(), which deletes the server's directory.
    const persistence = ['--appendonly', 'yes', '--appendfsync', 'always'];
    for (const id of serversFor(kinds)) this.servers.set(id, await spawnRedis([...persistence, ...ACL_ARGS]));
    for (let worker = 0; worker < processes; worker += 1) {
      for (let client = 0; client < clients; client += 1) {
        for (const [server, redis] of this.servers) {
          this.proxies.set(proxyKey({ worker, client, server }), await startFaultProxy(redis.port));
        }
      }
    }
    for (let worker = 0; worker < processes; worker += 1) {
      this.#workers.push({ proc: undefined, incarnation: -1, exitExpected: false, killedAt: undefined, done: undefined });
      await this.#spawn(worker);
    }
  }

  /** Starts (again) worker `worker`; resolves once it reported ready. */
  async #spawn(worker: number): Promise<void> {
    const slot = this.#workers[worker]!;
    slot.incarnation += 1;
    slot.exitExpected = false;
    slot.killedAt = undefined;
    const { seed, kinds, clients, keyPrefix, actorsPerClient, client, renewal } = this.#options;
    const url = (server: ServerId, client: number): string => {
      const plain = this.proxies.get(proxyKey({ worker, client, server }))!.url;
      return this.setups[worker]![client]!.acl ? asAclUser(plain) : plain;
    };
    const config: WorkerConfig = {
      worker,
      incarnation: slot.incarnation,
      seed: workerSeed(seed, worker, slot.incarnation),
      kinds,
      clients: Array.from({ length: clients }, (_, client) => ({
        main: this.servers.has('main') ? url('main', client) : undefined,
        red: this.serverIds.filter((id) => id !== 'main').map((id) => url(id, client)),
        setup: this.setups[worker]![client]!,
      })),
      keyPrefix,
      client,
      actorsPerClient,
      renewal,
    };
    const proc = fork(WORKER, [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    slot.proc = proc;
    const incarnation = slot.incarnation;
    const ready = new Promise<void>((resolve) => {
      proc.on('message', (event: WorkerEvent) => {
        if (event.type === 'ready') resolve();
        if (event.type === 'stuck') slot.stuck = event.doing;
        this.#options.onEvent({ worker, incarnation, event });
      });
    });
    slot.done = new Promise<void>((resolve) => {
      proc.on('exit', (code, signal) => {
        if (!slot.exitExpected && !this.#closing && code !== 0) {
          this.crashes.push(`worker ${worker}#${incarnation} exited with ${signal ?? code}`);
        }
        this.#options.onExit(worker, incarnation, slot.killedAt ?? now(), slot.killedAt !== undefined);
        resolve();
      });
    });
    await Promise.race([ready, slot.done]);
  }

  /** Applies `fault` now, and ends it after its duration; resolves when it is over. */
  inject(fault: Fault): Promise<void> {
    const record: FaultRecord = { fault, start: now(), end: undefined };
    this.log.push(record);
    const run = this.#apply(fault, record)
      .catch((error: unknown) => {
        record.error = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        record.end ??= now();
        this.#pending.delete(run);
      });
    this.#pending.add(run);
    return run;
  }

  async #apply(fault: Fault, record: FaultRecord): Promise<void> {
    const proxies = 'proxies' in fault ? fault.proxies.map((p) => this.proxies.get(proxyKey(p))!) : [];
    switch (fault.type) {
      case 'latency':
        for (const proxy of proxies) proxy.latency({ up: fault.up, down: fault.down });
        await sleep(fault.duration);
        for (const proxy of proxies) proxy.latency({});
        return;
      case 'blackhole-short':
      case 'blackhole-long':
        for (const proxy of proxies) proxy.blackhole({ drop: fault.drop });
        await sleep(fault.duration);
        // Dropped bytes break the RESP stream: as TCP would, the connection dies with them.
        if (fault.drop) for (const proxy of proxies) proxy.resetAll();
        for (const proxy of proxies) proxy.heal();
        return;
      case 'swallow':
        for (const proxy of proxies) proxy.swallowReplies(fault.n, { thenBlackhole: fault.thenBlackhole });
        if (fault.thenBlackhole) {
          await sleep(fault.duration);
          for (const proxy of proxies) proxy.heal();
        }
        return;
      case 'reset':
        for (const proxy of proxies) proxy.resetAll();
        return;
      case 'sigstop': {
        const slot = this.#workers[fault.worker]!;
        const proc = slot.proc;
        if (!proc || proc.exitCode !== null) throw new Error('worker not running');
        proc.kill('SIGSTOP');
        try {
          await sleep(fault.duration);
        } finally {
          proc.kill('SIGCONT');
          record.end = now();
        }
        return;
      }
      case 'sigkill': {
        const slot = this.#workers[fault.worker]!;
        const proc = slot.proc;
        if (!proc || proc.exitCode !== null) throw new Error('worker not running');
        slot.exitExpected = true;
        slot.killedAt = now();
        proc.kill('SIGKILL');
        await slot.done;
        record.end = now();
        await sleep(fault.duration);
        if (!this.#closing) await this.#spawn(fault.worker);
        return;
      }
      case 'redis-restart': {
        const server = this.servers.get(fault.server)!;
        await server.stop();
        record.end = now();
        await sleep(fault.duration);
        await server.start();
        return;
      }
      case 'redis-crash-aof': {
        const server = this.servers.get(fault.server)!;
        server.signal('SIGKILL');
        const deadline = Date.now() + 5_000;
        while (!(await portClosed(server.port)) && Date.now() < deadline) await sleep(10);
        record.end = now();
        await server.start();
        return;
      }
      case 'refuse-scripts':
        await this.#scripts(fault.server, false);
        try {
          await sleep(fault.duration);
        } finally {
          await this.#allowScripts(fault.server);
          record.end = now();
        }
        return;
    }
  }

  /** Takes the ACL user's scripts away on `server`, or gives them back. */
  async #scripts(server: ServerId, allow: boolean): Promise<void> {
    let admin = this.#admins.get(server);
    if (!admin) {
      admin = new Redis(this.servers.get(server)!.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
      admin.on('error', () => undefined);
      this.#admins.set(server, admin);
    }
    await admin.call('ACL', 'SETUSER', ACL_USER, allow ? '+@scripting' : '-@scripting');
  }

  /**
   * Scripts allowed again, however long it takes to say so (bounded): a server restarted
   * meanwhile came back with them allowed, one down now will.
   */
  async #allowScripts(server: ServerId): Promise<void> {
    for (let tries = 0; tries < 20; tries += 1) {
      try {
        await this.#scripts(server, true);
        return;
      } catch {
        await sleep(250);
      }
    }
  }

  /** Lets running faults end (bounded), heals everything. */
  async quiesce(): Promise<void> {
    await Promise.race([Promise.allSettled([...this.#pending]), sleep(15_000)]);
    for (const proxy of this.proxies.values()) {
      proxy.latency({});
      proxy.endSwallows();
      proxy.heal();
    }
    for (const server of this.servers.keys()) await this.#allowScripts(server);
  }

  /** Asks every worker to stop; kills those that do not finish within `timeoutMs`. */
  async stopWorkers(timeoutMs: number): Promise<void> {
    await Promise.all(
      this.#workers.map(async (slot) => {
        const proc = slot.proc;
        if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
        proc.kill('SIGCONT');
        if (proc.connected) proc.send({ type: 'stop' });
        const stopped = await Promise.race([slot.done!.then(() => true), sleep(timeoutMs).then(() => false)]);
        if (!stopped) {
          this.crashes.push(`worker ${this.#workers.indexOf(slot)} did not stop within ${timeoutMs} ms (still ${slot.stuck ?? 'unknown'})`);
          slot.exitExpected = true;
          slot.killedAt = now();
          proc.kill('SIGKILL');
          await slot.done;
        }
      }),
    );
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const slot of this.#workers) {
      if (slot.proc && slot.proc.exitCode === null && slot.proc.signalCode === null) {
        slot.proc.kill('SIGKILL');
        await slot.done;
      }
    }
    for (const admin of this.#admins.values()) admin.disconnect();
    for (const proxy of this.proxies.values()) await proxy.close();
    for (const server of this.servers.values()) await server.stop();
  }
}
