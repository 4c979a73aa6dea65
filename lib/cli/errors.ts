/**
 * Exit codes of the `rlock` command, one meaning each across its commands (see docs/operations.md).
 * `exec` exits with its command's status once the command ran (see ExecExit).
 */
export const ExitCode = {
  /** Done. */
  Ok: 0,
  /** No such lock (of that kind), or nothing to do (force-unlock of a free lock, list found none). */
  NotFound: 1,
  /** Bad command line or `--url`; force-unlock without `--yes` and no terminal to ask on. */
  Usage: 2,
  /** exec: the lock was not taken within `--wait`; the command did not run. */
  NotTaken: 3,
  /** exec: the lock was lost while the command ran; the command was stopped. */
  Lost: 4,
  /** Redis could not be reached, refused a command, or failed (exec: before its command started). */
  Connection: 5,
} as const;

/** A bad command line: exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** No such lock, or nothing to do: exit code 1. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}
