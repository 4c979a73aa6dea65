/** Exit codes of the `rlock` command (see docs/operations.md). */
export const ExitCode = {
  /** Done. */
  Ok: 0,
  /** No such lock (of that kind), or nothing to do (force-unlock of a free lock, list found none). */
  NotFound: 1,
  /** Bad command line or `--url`; force-unlock without `--yes` and no terminal to ask on. */
  Usage: 2,
  /** Redis could not be reached, refused a command, or failed. */
  Connection: 3,
} as const;

/** A bad command line: exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** No such lock, or nothing to do: exit code 1. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}
