import { spawn } from 'node:child_process';
import { LockClient } from '../client.js';
import type { RedisConnection } from '../redis/connection.js';
import { LockAcquireTimeoutError } from '../errors.js';
import type { Lease } from '../lease/lease.js';
import { MIN_LEASE_MS } from '../options.js';
import { MAX_DURATION_MS } from '../validate.js';
import { ExitCode, UsageError } from './errors.js';
import { signalStatus, type ExecSignals } from './exec-signals.js';

/** Exit codes of `rlock exec` besides the command's own status: the command's table (ExitCode), and the shell's. */
export const ExecExit = {
  /** Bad command line. */
  Usage: ExitCode.Usage,
  /** The lock was not taken within `--wait`: the command did not run. */
  NotTaken: ExitCode.NotTaken,
  /** The lock was lost while the command ran: it was stopped (SIGTERM, then SIGKILL after 5 s). */
  Lost: ExitCode.Lost,
  /** Redis could not be reached or failed before the command started. */
  Redis: ExitCode.Connection,
  /** The command was found but could not be run. */
  CannotRun: 126,
  /** The command was not found. */
  NotFound: 127,
} as const;

/** How long a command stopped because the lock was lost has between SIGTERM and SIGKILL, ms. */
export const STOP_GRACE_MS = 5_000;

/** What `rlock exec` was asked to do, checked. */
export interface ExecRequest {
  readonly name: string;
  /** ms to wait for the lock; 0: one attempt. */
  readonly waitMs: number;
  /** A fixed lease, ms; undefined: watchdog mode. */
  readonly leaseMs: number | undefined;
  /** The command and its arguments. */
  readonly command: readonly string[];
}

function wholeMs(value: string | undefined, option: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > MAX_DURATION_MS) {
    throw new UsageError(`${option} must be a whole number of ms from ${min} to ${MAX_DURATION_MS}, got "${value}"`);
  }
  return n;
}

/** Checks `rlock exec`'s arguments before anything is sent. @throws UsageError */
export function parseExec(names: readonly string[], wait: string | undefined, lease: string | undefined, command: readonly string[] | undefined): ExecRequest {
  if (names.length !== 1) throw new UsageError(`exec takes one lock name before --, got ${names.length}`);
  const name = names[0]!;
  if (name === '') throw new UsageError('the lock name is empty');
  if (command === undefined || command.length === 0 || command[0] === '') throw new UsageError('exec needs a command after --: rlock exec <name> -- <command> [args…]');
  return { name, waitMs: wholeMs(wait, '--wait', 0) ?? 0, leaseMs: wholeMs(lease, '--lease', MIN_LEASE_MS), command };
}

/** What `rlock exec` says and returns when a signal ended its wait: 128 + the signal's number. */
export function waitEndedBy(signal: NodeJS.Signals, request: ExecRequest, err: (text: string) => void): number {
  err(`rlock exec: ${signal} while waiting for lock "${request.name}"; the command did not run`);
  return signalStatus(signal);
}

/**
 * Runs the command while holding lock `name` (the plain lock, as `runExclusive(name)` and
 * `getLock(name)` use it), passing signals on to it (`signals`, handled since the process
 * started); resolves with the exit code: the command's status (128 + the signal's number when a
 * signal ended it, or ended the wait for the lock), or one of {@link ExecExit}.
 */
export async function execCommand(
  connection: RedisConnection,
  keyPrefix: string,
  request: ExecRequest,
  signals: ExecSignals,
  err: (text: string) => void,
): Promise<number> {
  const locks = new LockClient(connection, { keyPrefix });
  locks.on('error', (error: unknown) => err(`rlock exec: ${error instanceof Error ? error.message : String(error)}`));
  locks.on('lost', () => undefined); // told through the lease's signal
  try {
    let lease: Lease;
    try {
      lease = await locks.getLock(request.name).acquire({ waitTime: request.waitMs, leaseTime: request.leaseMs ?? -1, signal: signals.ended });
    } catch (error) {
      const endedBy = signals.endedBy;
      if (endedBy) return waitEndedBy(endedBy, request, err);
      if (!(error instanceof LockAcquireTimeoutError)) throw error;
      err(`rlock exec: lock "${request.name}" was not taken within ${request.waitMs} ms; the command did not run`);
      return ExecExit.NotTaken;
    }
    try {
      // A signal that came as the lock was taken: the command does not start.
      const endedBy = signals.endedBy;
      if (endedBy) return waitEndedBy(endedBy, request, err);
      return await runHolding(request, lease.signal, signals, err);
    } finally {
      await lease.release().catch((error: unknown) => err(`rlock exec: release of "${request.name}" failed (it frees when its lease ends): ${String(error)}`));
    }
  } catch (error) {
    err(`rlock exec: ${error instanceof Error ? error.message : String(error)}`);
    return ExecExit.Redis;
  } finally {
    await locks.close();
  }
}

/** Runs the command until it exits, signals passed on to it; stops it when `lost` aborts. */
function runHolding(request: ExecRequest, lost: AbortSignal, signals: ExecSignals, err: (text: string) => void): Promise<number> {
  return new Promise((resolve) => {
    const [file, ...args] = request.command;
    const child = spawn(file!, args, { stdio: 'inherit' });
    signals.running(child);
    let lockLost = false;
    let killTimer: NodeJS.Timeout | undefined;
    const onLost = (): void => {
      lockLost = true;
      err(`rlock exec: lock "${request.name}" was lost while the command ran: stopping it (SIGTERM, SIGKILL after ${STOP_GRACE_MS / 1_000} s)`);
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    };
    if (lost.aborted) onLost();
    else lost.addEventListener('abort', onLost, { once: true });
    const done = (code: number): void => {
      clearTimeout(killTimer);
      lost.removeEventListener('abort', onLost);
      signals.commandDone();
      resolve(code);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      err(`rlock exec: cannot run "${file}": ${error.message}`);
      done(error.code === 'ENOENT' ? ExecExit.NotFound : ExecExit.CannotRun);
    });
    child.once('exit', (code, signal) => {
      if (lockLost) done(ExecExit.Lost);
      else if (signal) done(signalStatus(signal));
      else done(code ?? 0);
    });
  });
}
