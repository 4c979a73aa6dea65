#!/usr/bin/env node
// The `rlock` command: look at locks, list them, force-unlock one, watch one live, run a command holding one.
// Usage and exit codes: `rlock --help`, docs/operations.md.
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { forceUnlockCommand, inspectCommand, KINDS, listCommand, watchCommand, type CommandContext } from './commands.js';
import { parseTarget } from './connect.js';
import { execCommand, parseExec, waitEndedBy, type ExecRequest } from './exec.js';
import { ExecSignals, WaitEnded } from './exec-signals.js';
import { openConnection, type OpenConnection } from './open-connection.js';
import { redisPortOf } from '../redis/detect.js';
import { LockScripts } from '../scripts/registry.js';
import { ExitCode, NotFoundError, UsageError } from './errors.js';
import type { InspectedKind } from '../inspect/types.js';

const HELP = `rlock: look at and operate rlock locks in Redis

Usage:
  rlock inspect <name>        kind, holders, hold counts, TTL, fencing token, fair queue, waiting clients
  rlock list [--match GLOB]   the locks under the prefix (SCAN on every master, never KEYS)
  rlock force-unlock <name>   delete a held lock whoever holds it (asks first, unless --yes)
  rlock watch <name>          the inspect view, refreshed every --interval until Ctrl-C
  rlock exec <name> [--wait MS] [--lease MS] -- <command> [args...]
                              run a command while holding lock <name> (renewed while it runs,
                              or a fixed --lease), pass signals on to it, release when it exits

Options:
  --url URL         redis://[[user]:password@]host[:port][/db], rediss://... (TLS),
                    redis+sentinel://host:port[,host:port...]/master-name[/db][?sentinelPassword=...],
                    with --cluster: redis://host:port[,host:port...] (Cluster seeds)
                    (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --cluster         the URL's hosts are Cluster seeds
  --prefix P        the LockClient keyPrefix the locks were made with (default: rlock)
  --kind K          expect this kind: lock, fenced, fair or read-write (inspect, watch, force-unlock)
  --json            machine-readable output (watch: one JSON object per line)
  --yes, -y         force-unlock without asking
  --match GLOB      list: only lock names matching GLOB (default: *)
  --interval MS     watch: refresh every MS ms (default: 1000)
  --count N         watch: stop after N views (default: until Ctrl-C)
  --wait MS         exec: wait up to MS ms for the lock (default: 0, one attempt)
  --lease MS        exec: hold the lock with a fixed lease of MS ms (default: renewed while the command runs)
  --help, -h        this help;  --version, -V  the version

Exit codes, one meaning each for every command:
  0  done
  1  no such lock (of that kind), or nothing to do (list found none, force-unlock of a free lock)
  2  bad usage or URL
  3  exec: the lock was not taken within --wait; the command did not run
  4  exec: the lock was lost while the command ran; it was stopped (SIGTERM, SIGKILL after 5 s)
  5  Redis unreachable, refused or failed (exec: before the command started)
rlock exec otherwise exits with the command's status (128 + N when signal N ended it); 126 the
command could not be run; 127 it was not found; 128 + N when SIGINT, SIGTERM, SIGHUP or SIGQUIT
(signal N) came while it connected or waited for the lock (the command did not run). SIGUSR1 and
SIGUSR2 are ignored until the command runs; once it runs, all six are passed on to it.`;

function version(): string {
  const require = createRequire(import.meta.url);
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(path) as { name?: string; version?: string };
      if (pkg.name === 'rlock' && pkg.version) return pkg.version;
    } catch {
      // Not at this path: built (dist/cli.js) or run from source (lib/cli/main.ts).
    }
  }
  return 'unknown';
}

function positiveInt(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${option} must be a positive whole number, got "${value}"`);
  return n;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && !error.message.includes(error.cause.message) ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/** Runs the command line `argv` (without node and the script); resolves with the exit code. */
async function main(argv: string[], out: (text: string) => void = (text) => void process.stdout.write(`${text}\n`)): Promise<number> {
  let stopped = false;
  const onSigint = (): void => {
    stopped = true;
  };
  let opened: OpenConnection | undefined;
  let exec: ExecRequest | undefined;
  try {
    // `exec`: everything after the first `--` is the command, whatever it looks like.
    const dash = argv.indexOf('--');
    const isExec = parseArgs({ args: argv, allowPositionals: true, strict: false }).positionals[0] === 'exec' && dash !== -1;
    // Before anything can wait: a signal must never reach Node's defaults (see ExecSignals).
    const signals = isExec ? new ExecSignals() : undefined;
    const { values, positionals } = parseArgs({
      args: isExec ? argv.slice(0, dash) : argv,
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: 'string' },
        cluster: { type: 'boolean', default: false },
        prefix: { type: 'string', default: 'rlock' },
        kind: { type: 'string' },
        json: { type: 'boolean', default: false },
        yes: { type: 'boolean', short: 'y', default: false },
        match: { type: 'string', default: '*' },
        interval: { type: 'string' },
        count: { type: 'string' },
        wait: { type: 'string' },
        lease: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'V', default: false },
      },
    });
    if (values.help) {
      out(HELP);
      return ExitCode.Ok;
    }
    if (values.version) {
      out(version());
      return ExitCode.Ok;
    }
    const [command, ...rest] = positionals;
    if (command === undefined) throw new UsageError('no command: inspect, list, force-unlock, watch or exec (rlock --help)');
    if (command === 'exec') exec = parseExec(rest, values.wait, values.lease, isExec ? argv.slice(dash + 1) : undefined);
    const needsName = command === 'inspect' || command === 'force-unlock' || command === 'watch';
    if (!needsName && command !== 'list' && !exec) throw new UsageError(`unknown command "${command}" (rlock --help)`);
    if (needsName && rest.length !== 1) throw new UsageError(`${command} takes one lock name, got ${rest.length}`);
    if (!needsName && !exec && rest.length > 0) throw new UsageError('list takes no lock name (filter with --match GLOB)');
    const name = rest[0] ?? '';
    if (needsName && name === '') throw new UsageError('the lock name is empty');
    if (/[{}]/.test(values.prefix)) throw new UsageError('--prefix may not contain braces');
    if (values.prefix === '') throw new UsageError('--prefix is empty');
    if (values.kind !== undefined && !KINDS.includes(values.kind as InspectedKind)) {
      throw new UsageError(`--kind must be one of ${KINDS.join(', ')}, got "${values.kind}"`);
    }
    const kind = values.kind as InspectedKind | undefined;
    const intervalMs = positiveInt(values.interval, '--interval', 1_000);
    const count = positiveInt(values.count, '--count', Number.MAX_SAFE_INTEGER);
    const target = parseTarget(values.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', values.cluster);

    const err = (text: string): void => void process.stderr.write(`${text}\n`);
    try {
      // exec: a signal while connecting ends the wait; a connection opened after it is closed.
      opened = await (signals ? signals.race(openConnection(target), (late) => late.close()) : openConnection(target));
    } catch (error) {
      if (exec && error instanceof WaitEnded) return waitEndedBy(error.signal, exec, err);
      err(`rlock: cannot connect to ${target.display}: ${describe(error)}`);
      return ExitCode.Connection;
    }
    if (exec && signals) return await execCommand(opened.connection, values.prefix, exec, signals, err);
    process.on('SIGINT', onSigint);
    const { connection } = opened;
    const redis = redisPortOf(connection, 'connection');
    const ctx: CommandContext = { redis, scripts: new LockScripts(redis, 'rlock-cli'), connection, keyPrefix: values.prefix, json: values.json, out, stopped: () => stopped };
    if (command === 'inspect') await inspectCommand(ctx, name, kind);
    else if (command === 'list') await listCommand(ctx, values.match);
    else if (command === 'force-unlock') await forceUnlockCommand(ctx, name, kind, values.yes);
    else await watchCommand(ctx, name, kind, intervalMs, count);
    return ExitCode.Ok;
  } catch (error) {
    process.stderr.write(`rlock: ${describe(error)}\n`);
    if (error instanceof NotFoundError) return ExitCode.NotFound;
    if (error instanceof UsageError) return ExitCode.Usage;
    // parseArgs' own errors (unknown option, missing value) are usage errors too.
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) return ExitCode.Usage;
    // A LockRedisError, or anything else from Redis or the connection.
    return ExitCode.Connection;
  } finally {
    process.off('SIGINT', onSigint);
    opened?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
