/** Command-line arguments of `npm run torture -- [--seed N] [--seconds S] [--kinds …] [--processes P] [--client …]`. */

/** The Redis client the workers' LockClients run on. */
export const CLIENTS = ['ioredis', 'node-redis', 'iovalkey'] as const;
export type TortureClient = (typeof CLIENTS)[number];

export const KINDS = ['lock', 'fair', 'rw', 'fenced', 'multi', 'redlock', 'semaphore', 'election'] as const;
export type Kind = (typeof KINDS)[number];

export interface TortureArgs {
  /** Seeds the fault schedule and every worker's choice of operations. */
  readonly seed: number;
  /** How long faults are injected and operations run, s (then the run settles and is checked). */
  readonly seconds: number;
  readonly kinds: readonly Kind[];
  /** Worker processes. */
  readonly processes: number;
  /** LockClients per worker process (each behind its own fault proxies). */
  readonly clients: number;
  /** The Redis client the workers use. */
  readonly client: TortureClient;
  /** Whether about half the clients run a renewal thread and stall (`--threads off`: none do). */
  readonly threads: boolean;
}

export const USAGE =
  'usage: npm run torture -- [--seed N] [--seconds S] [--kinds lock,fair,rw,fenced,multi,redlock,semaphore,election] [--processes P] [--clients C] [--client ioredis|node-redis|iovalkey] [--threads on|off]';

function integer(flag: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${flag} wants an integer from ${min} to ${max}, got ${JSON.stringify(value)}\n${USAGE}`);
  }
  return n;
}

/** Parses argv (without node and the script); throws with the usage on anything unknown. */
export function parseArgs(argv: readonly string[], defaultSeed: () => number): TortureArgs {
  let seed: number | undefined;
  let seconds = 60;
  let kinds: Kind[] = [...KINDS];
  let processes = 3;
  let clients = 2;
  let client: TortureClient = 'ioredis';
  let threads = true;
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--seed':
        seed = integer(flag, value(), 0, 2 ** 32 - 1);
        break;
      case '--seconds':
        seconds = integer(flag, value(), 5, 24 * 3600);
        break;
      case '--processes':
        processes = integer(flag, value(), 1, 16);
        break;
      case '--clients':
        clients = integer(flag, value(), 1, 8);
        break;
      case '--client': {
        const name = value() ?? '';
        if (!(CLIENTS as readonly string[]).includes(name)) throw new Error(`--client wants one of ${CLIENTS.join(', ')}, got ${JSON.stringify(name)}\n${USAGE}`);
        client = name as TortureClient;
        break;
      }
      case '--kinds': {
        const list = (value() ?? '').split(',').filter(Boolean);
        const unknown = list.filter((kind) => !(KINDS as readonly string[]).includes(kind));
        if (list.length === 0 || unknown.length > 0) {
          throw new Error(`--kinds: unknown kind(s) ${JSON.stringify(unknown)} (known: ${KINDS.join(',')})\n${USAGE}`);
        }
        kinds = [...new Set(list)] as Kind[];
        break;
      }
      case '--threads': {
        const on = value();
        if (on !== 'on' && on !== 'off') throw new Error(`--threads wants on or off, got ${JSON.stringify(on)}\n${USAGE}`);
        threads = on === 'on';
        break;
      }
      case '--help':
      case '-h':
        throw new Error(USAGE);
      default:
        throw new Error(`unknown argument ${JSON.stringify(argv[i])}\n${USAGE}`);
    }
  }
  return { seed: seed ?? defaultSeed(), seconds, kinds, processes, clients, client, threads };
}
