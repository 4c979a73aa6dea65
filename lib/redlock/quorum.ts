import { RedLockQuorumError, type RedLockNodeFailure, type RedLockOperation } from '../errors.js';
import { REDLOCK_DRIFT_FACTOR, REDLOCK_DRIFT_MS } from '../options.js';
import type { FanOutResult, NodeAnswer } from './fan-out.js';

/** The majority of `nodes`: nodes / 2 + 1. */
export function quorumOf(nodes: number): number {
  return Math.floor(nodes / 2) + 1;
}

/** The clock drift a RedLock allows for on a lease of `ttlMs`: 1 % of it plus 2 ms. */
export function driftOf(ttlMs: number): number {
  return Math.floor(ttlMs * REDLOCK_DRIFT_FACTOR) + REDLOCK_DRIFT_MS;
}

/** How a node's answer counts for the round's outcome. */
export type Verdict = 'yes' | 'no';

/** The answers of one round, counted. */
export interface Tally {
  readonly yes: number;
  readonly no: number;
  readonly failures: readonly RedLockNodeFailure[];
  readonly unanswered: number;
}

export function tally<T>(answers: readonly (NodeAnswer<T> | undefined)[], verdict: (value: T) => Verdict): Tally {
  let yes = 0;
  let no = 0;
  let unanswered = 0;
  const failures: RedLockNodeFailure[] = [];
  answers.forEach((answer, node) => {
    if (answer === undefined) unanswered += 1;
    else if (answer.kind === 'timeout') failures.push({ node, reason: 'timeout' });
    else if (answer.kind === 'error') failures.push({ node, reason: 'error', error: answer.error });
    else if (verdict(answer.value) === 'yes') yes += 1;
    else no += 1;
  });
  return { yes, no, failures, unanswered };
}

/**
 * True once a round's outcome is certain: a majority said yes, or so many said no or failed
 * that no majority can say yes.
 */
export function certain(counted: Tally, nodes: number): boolean {
  const quorum = quorumOf(nodes);
  return counted.yes >= quorum || counted.no + counted.failures.length > nodes - quorum;
}

/** Describes a round without a majority. */
export function quorumError<T>(
  operation: RedLockOperation,
  lockName: string,
  round: FanOutResult<T>,
  counted: Tally,
  extra: { attempts?: number; validityMs?: number } = {},
): RedLockQuorumError {
  return new RedLockQuorumError(
    {
      operation,
      nodes: round.answers.length,
      quorum: quorumOf(round.answers.length),
      granted: counted.yes,
      refused: counted.no,
      failures: counted.failures,
      unanswered: counted.unanswered,
      elapsedMs: round.decidedAt - round.startedAt,
      validityMs: extra.validityMs,
      attempts: extra.attempts ?? 1,
    },
    { lockName },
  );
}
