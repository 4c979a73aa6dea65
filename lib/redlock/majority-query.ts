import type { RoundNodes } from './acquire-round.js';
import { fanOut } from './fan-out.js';
import { quorumError, tally } from './quorum.js';

/**
 * Asks every node of a RedLock (each answer awaited at most the per-node timeout) and resolves
 * with the answers, once at least a majority answered. @throws RedLockQuorumError otherwise.
 */
export async function askMajority<T>(nodes: RoundNodes, lockName: string, call: (node: number) => Promise<T>): Promise<T[]> {
  const round = await fanOut(nodes.locks.length, call, nodes.nodeTimeoutMs);
  const values = round.answers.flatMap((answer) => (answer?.kind === 'answered' ? [answer.value] : []));
  if (values.length < nodes.quorum) throw quorumError('query', lockName, round, tally(round.answers, () => 'yes'));
  return values;
}

/** The value a majority of nodes reaches: the quorum-th largest. */
export function majorityValue(values: number[], quorum: number): number {
  return values.sort((a, b) => b - a)[quorum - 1] ?? 0;
}
