import { Redis } from 'ioredis';

/** Records the commands clients send to a server (MONITOR), leaving out those run inside scripts. */
export class CommandRecorder {
  readonly commands: string[][] = [];
  readonly #conn: Redis;

  private constructor(conn: Redis) {
    this.#conn = conn;
  }

  static async start(url: string): Promise<CommandRecorder> {
    const conn = new Redis(url);
    // Connected first: its own ready check (INFO) must not reach Redis right behind MONITOR. ioredis
    // enters monitor mode a tick after MONITOR's answer, and takes a line that comes in the same
    // chunk for a reply ("Command queue state error").
    await conn.ping();
    const recorder = new CommandRecorder(conn);
    const monitor = await conn.monitor();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua') recorder.commands.push(args);
    });
    // MONITOR is live once its own reply came back; give it a moment to settle.
    await new Promise((resolve) => setTimeout(resolve, 20));
    recorder.#monitor = monitor;
    return recorder;
  }

  #monitor: Redis | undefined;

  /** Command names in order (lower case), e.g. ['evalsha', 'evalsha']. */
  get names(): string[] {
    return this.commands.map((args) => args[0]!.toLowerCase());
  }

  /** How many were script calls (EVALSHA or EVAL). */
  get scriptCalls(): number {
    return this.names.filter((name) => name === 'evalsha' || name === 'eval').length;
  }

  /** Forgets what was recorded so far. */
  reset(): void {
    this.commands.length = 0;
  }

  async stop(): Promise<void> {
    // MONITOR output trails the commands a little.
    await new Promise((resolve) => setTimeout(resolve, 100));
    this.#monitor?.disconnect();
    this.#conn.disconnect();
  }
}

/** ioredis sends a script's first call on a connection as EVAL, later ones as EVALSHA: both are 'script'. */
export const scriptCall = (name: string): string => (name === 'evalsha' || name === 'eval' ? 'script' : name);
