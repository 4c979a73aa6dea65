import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A redis-server process this test run started itself, on a free loopback port. */
export interface SpawnedRedis {
  readonly port: number;
  readonly url: string;
  readonly pid: number | undefined;
  /** Stops the process (SIGTERM, then SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted). */
  start(): Promise<void>;
  /** Sends a signal (SIGSTOP/SIGCONT to freeze a node, SIGKILL to crash it). */
  signal(signal: NodeJS.Signals): void;
}

/**
 * The server binary to spawn: `RLOCK_TEST_SERVER` (a path to valkey-server, say, from
 * tools/valkey.sh) or `redis-server` from PATH. It also runs Sentinels (`--sentinel`).
 */
export function serverCommand(): string {
  return process.env.RLOCK_TEST_SERVER || 'redis-server';
}

/** The command-line client beside the server: valkey-cli for valkey-server, redis-cli for redis-server. */
export function cliCommand(): string {
  return serverCommand().replace(/-server$/, '-cli');
}

export function hasRedisServer(): boolean {
  return spawnSync(serverCommand(), ['--version'], { stdio: 'ignore' }).status === 0;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

async function pingable(port: number): Promise<boolean> {
  const socket = new Socket();
  try {
    socket.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('PING\r\n');
    const [data] = (await once(socket, 'data')) as [Buffer];
    return data.toString().startsWith('+PONG');
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

/** How to start the server beyond the defaults. */
export interface SpawnOptions {
  /** A config file, read first (Sentinel needs one it may rewrite). */
  readonly configFile?: string;
  /** Run as a Sentinel (`--sentinel`): no persistence options then. */
  readonly sentinel?: boolean;
}

/** Spawns the server (`serverCommand()`) on a free 127.0.0.1 port with no persistence; `extraArgs` are appended. */
export async function spawnRedis(extraArgs: string[] = [], options: SpawnOptions = {}): Promise<SpawnedRedis> {
  if (!hasRedisServer()) {
    throw new Error(
      `${serverCommand()} does not run: install redis-server (apt-get install -y redis-server), or set RLOCK_TEST_SERVER or REDIS_URL`,
    );
  }
  // A free port can be taken before the server binds it (the specs' own connections use these
  // loopback ports too), and a Cluster node's bus port (port + 10000 unless given) is never checked:
  // a server that exits at its first start is started again on other ports.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const bus = extraArgs.includes('--cluster-enabled') ? ['--cluster-port', String(await freePort())] : [];
    try {
      return await spawnOn(port, [...extraArgs, ...bus], options);
    } catch (error) {
      if (attempt === 3 || !(error instanceof ServerExited)) throw error;
    }
  }
}

/** The server exited while starting (its port taken, say). */
class ServerExited extends Error {}

async function spawnOn(port: number, extraArgs: string[], options: SpawnOptions): Promise<SpawnedRedis> {
  // Its own working directory: a replica's full sync writes an RDB file there, never in the repo.
  const dir = await mkdtemp(join(tmpdir(), `rlock-redis-${port}-`));
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const args = [
      ...(options.configFile ? [options.configFile] : []),
      ...(options.sentinel ? ['--sentinel'] : ['--save', '', '--appendonly', 'no']),
      '--port', String(port), '--bind', '127.0.0.1', '--loglevel', 'warning',
      ...extraArgs,
    ];
    await mkdir(dir, { recursive: true });
    const proc = spawn(serverCommand(), args, { stdio: ['ignore', 'ignore', 'inherit'], cwd: dir });
    child = proc;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new ServerExited(`redis-server on port ${port} exited with ${proc.exitCode}`);
      if (await pingable(port)) return;
      await sleep(20);
    }
    proc.kill('SIGKILL');
    throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = once(proc, 'exit');
      proc.kill('SIGCONT');
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    stop,
    start,
    signal: (sig) => child?.kill(sig),
  };
}
