import { LockError, type LockErrorOptions } from './lock-error.js';

// A RedLock round that found no majority: what each node answered, as data and as one line.

/** The RedLock call that found no majority. */
export type RedLockOperation = 'acquire' | 'renew' | 'release' | 'query' | 'extend' | 'handOff' | 'adopt';

/** A RedLock node that did not answer usefully. */
export interface RedLockNodeFailure {
  /** The node's position among the RedLock's locks, from 0. */
  readonly node: number;
  /** `timeout`: no answer within the per-node timeout; `error`: the call failed. */
  readonly reason: 'timeout' | 'error';
  /** The error, for `reason: 'error'`. */
  readonly error?: unknown;
}

/** What the nodes of one RedLock round answered. */
export interface RedLockRoundInfo {
  /** The RedLock call the round belongs to. */
  readonly operation: RedLockOperation;
  /** Nodes of the RedLock. */
  readonly nodes: number;
  /** Nodes needed: a majority, nodes / 2 + 1. */
  readonly quorum: number;
  /**
   * Nodes that said yes: granted (acquire), renewed (renew), held by the owner (release), answered
   * (query), extended (extend), handed off (handOff), adopted (adopt).
   */
  readonly granted: number;
  /**
   * Nodes that said no: held by another owner (acquire), gone or held by another owner (renew),
   * not held by this owner (release, extend, handOff), adopted already or ended (adopt); 0 for queries.
   */
  readonly refused: number;
  /** Nodes that timed out or failed, with the reason for each. */
  readonly failures: readonly RedLockNodeFailure[];
  /** Nodes whose answer was not awaited because the outcome was already certain. */
  readonly unanswered: number;
  /** From sending the round until its outcome was known, ms. */
  readonly elapsedMs: number;
  /** For an acquisition granted by a majority too late: lease − elapsed − drift, ms (≤ 0). */
  readonly validityMs?: number;
  /** Acquisition rounds made by the call that gave up (1 for the other operations). */
  readonly attempts: number;
}

const ROUND_WORDS: Record<RedLockOperation, [yes: string, no: string]> = {
  acquire: ['granted', 'refused (held by another owner)'],
  renew: ['renewed', 'refused (gone or held by another owner)'],
  release: ['held by the owner', 'refused (not held by this owner)'],
  query: ['answered', 'refused'],
  extend: ['extended', 'refused (no longer held by the owner)'],
  handOff: ['handed off', 'refused (no longer held by the owner)'],
  adopt: ['adopted', 'refused (adopted already, or ended)'],
};

/** One line on what a RedLock round's nodes answered. */
export function describeRedLockRound(info: RedLockRoundInfo): string {
  const [yes, no] = ROUND_WORDS[info.operation];
  const failures = info.failures.map((failure) => {
    const why = failure.reason === 'timeout' ? 'timed out' : failure.error instanceof Error ? failure.error.message : String(failure.error);
    return `node ${failure.node}: ${why}`;
  });
  const parts = [`${info.granted} ${yes}`, `${info.refused} ${no}`, `${info.failures.length} failed${failures.length ? ` (${failures.join('; ')})` : ''}`];
  if (info.unanswered > 0) parts.push(`${info.unanswered} not awaited`);
  const late =
    info.validityMs === undefined ? '' : `; a majority granted, but the validity ran out (${info.validityMs} ms left)`;
  const attempts = info.attempts > 1 ? `, last of ${info.attempts} attempts` : '';
  return `${info.operation}: ${info.quorum} of ${info.nodes} nodes needed, in ${Math.round(info.elapsedMs)} ms${attempts}: ${parts.join(', ')}${late}`;
}

/**
 * A RedLock round reached no majority. It tells what each node answered: how many granted,
 * how many refused because the lock is held elsewhere, how many failed and why, and how long it
 * took. `tryLock` returns false instead (see `RedLock.lastFailure`); `acquire`/`withLock` reject
 * with a LockAcquireTimeoutError whose `cause` is this; a lost majority while held aborts the
 * Lease with a LockLostError (reason `quorum`) whose `cause` is this.
 */
export class RedLockQuorumError extends LockError implements RedLockRoundInfo {
  /** `'RedLockQuorumError'`. */
  override readonly name = 'RedLockQuorumError' as const;
  override readonly code = 'REDLOCK_NO_QUORUM' as const;
  /** The RedLock call whose round found no majority. */
  readonly operation: RedLockOperation;
  readonly nodes: number;
  readonly quorum: number;
  readonly granted: number;
  readonly refused: number;
  readonly failures: readonly RedLockNodeFailure[];
  /** Nodes that timed out or failed: `failures.length`. */
  readonly failed: number;
  readonly unanswered: number;
  readonly elapsedMs: number;
  readonly validityMs: number | undefined;
  readonly attempts: number;

  constructor(info: RedLockRoundInfo, options: LockErrorOptions = {}) {
    super(`RedLock${options.lockName === undefined ? '' : ` "${options.lockName}"`} reached no majority: ${describeRedLockRound(info)}`, options);
    this.operation = info.operation;
    this.nodes = info.nodes;
    this.quorum = info.quorum;
    this.granted = info.granted;
    this.refused = info.refused;
    this.failures = info.failures;
    this.unanswered = info.unanswered;
    this.elapsedMs = info.elapsedMs;
    this.validityMs = info.validityMs;
    this.attempts = info.attempts;
    this.failed = info.failures.length;
  }
}
