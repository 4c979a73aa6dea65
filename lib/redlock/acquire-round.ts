import { exclusiveWait } from '../keys.js';
import type { RedNode } from './red-node.js';
import type { WaiterQueue } from '../waiting/waiter-queue.js';
import { WaiterMode } from '../scripts/registry.js';
import { raceDeadline } from '../waiting/wait.js';
import { fanOut, type FanOutResult } from './fan-out.js';
import { certain, driftOf, tally, type Tally, type Verdict } from './quorum.js';

/** The nodes of one RedLock, as its rounds need them. */
export interface RoundNodes {
  readonly locks: readonly RedNode[];
  readonly quorum: number;
  /** How long one node's answer is awaited, ms. */
  readonly nodeTimeoutMs: number;
}

/** How long the record of an undo (a release nobody awaits) answers a resend, ms. */
const UNDO_RECORD_MS = 1_000;

const granted = (holderTtl: number | null): Verdict => (holderTtl === null ? 'yes' : 'no');

/** One acquisition round, decided. */
export interface Attempt {
  readonly round: FanOutResult<number | null>;
  readonly counted: Tally;
  /** lease − elapsed − drift, ms: the lock is ours only while this is positive. */
  readonly validityMs: number;
  readonly acquired: boolean;
  /** So many nodes are held by other owners that no majority is possible until some free up. */
  readonly busy: boolean;
  /** When busy: how long until enough of those holders' keys expire, ms. */
  readonly freeInMs: number;
  /**
   * A node refused while this client's wake-up channel there was not yet live: a release it
   * published since may have reached nobody, so a notice cannot be relied on for the next try.
   */
  readonly deaf: boolean;
}

/** Every node's local waiter queue, entered: from now on refusing nodes publish to this client. */
export function openQueues(nodes: RoundNodes): WaiterQueue[] {
  const queues = nodes.locks.map((node) => node.core.waiters.get(exclusiveWait(node.keys)));
  for (const queue of queues) queue.enter();
  return queues;
}

/**
 * One round on every node; a round without a majority is undone before it resolves. In
 * watchdog mode each node gets its own client's `watchdogTimeout` (its watchdog renews to that);
 * the validity counts with `ttlMs`, the shortest of them.
 */
export async function attemptRound(
  nodes: RoundNodes,
  owner: string,
  ttlMs: number,
  watchdog: boolean,
  reentrant: boolean,
  queues: WaiterQueue[] | undefined,
  signal: AbortSignal | undefined,
): Promise<Attempt> {
  const { locks, quorum, nodeTimeoutMs } = nodes;
  const live = locks.map((_, i) => queues?.[i]?.subscribed ?? false);
  // The owner's node holds as the round goes out: one whose clock ends (and lets go of it in
  // Redis, for this owner) before the answers may take this round's grant on its node with it.
  const before = locks.map((lock) => lock.holdOf(owner));
  const pending = fanOut(
    locks.length,
    (i) => {
      const queue = queues?.[i];
      const mode = queue === undefined ? WaiterMode.Single : queue.othersWaiting ? WaiterMode.Shared : WaiterMode.Alone;
      return locks[i]!.attempt(owner, watchdog ? locks[i]!.core.watchdogTimeoutMs : ttlMs, mode);
    },
    nodeTimeoutMs,
    (answers) => certain(tally(answers, granted), locks.length),
  );
  let round: FanOutResult<number | null>;
  try {
    // Without a deadline this resolves with the round, or rejects when the signal aborts.
    round = (await raceDeadline(pending, Infinity, signal)) as FanOutResult<number | null>;
  } catch (error) {
    void pending.then((late) => undoRound(nodes, owner, late, reentrant));
    throw error;
  }
  const counted = tally(round.answers, granted);
  const validityMs = ttlMs - (round.decidedAt - round.startedAt) - driftOf(ttlMs);
  // A let-go sent meanwhile spoils the round: undone, and asked again within the wait.
  const acquired = counted.yes >= quorum && validityMs > 0 && !before.some((hold) => hold?.letGoSent);
  if (!acquired) await undoRound(nodes, owner, round, reentrant);
  // Refusals that must go before a majority is possible, and when the soonest of them expire.
  const mustFree = counted.no - (locks.length - quorum);
  const holderTtls = round.answers
    .flatMap((answer) => (answer?.kind === 'answered' && answer.value !== null ? [answer.value] : []))
    .map((ttl) => (ttl > 0 ? ttl : ttl === 0 ? 1 : ttlMs))
    .sort((a, b) => a - b);
  const deaf = round.answers.some((answer, i) => answer?.kind === 'answered' && answer.value !== null && !live[i]);
  return { round, counted, validityMs, acquired, busy: mustFree > 0, freeInMs: holderTtls[mustFree - 1] ?? 0, deaf };
}

/**
 * Undoes a round that did not win. An owner that held nothing before releases on every node,
 * also where the attempt seemed to fail: on each node's connection the release runs after the
 * attempt, so a late grant is undone too. A re-entering owner must keep its earlier holds, so
 * it releases only where this round granted, and where a late answer turns out to be a grant.
 * Resolves once the nodes that granted have confirmed.
 */
export async function undoRound(nodes: RoundNodes, owner: string, round: FanOutResult<number | null>, reentrant: boolean): Promise<void> {
  const { locks, nodeTimeoutMs } = nodes;
  const grantedNow = round.answers.flatMap((answer, i) => (answer?.kind === 'answered' && answer.value === null ? [i] : []));
  if (reentrant) {
    round.answers.forEach((answer, i) => {
      if (answer === undefined || answer.kind === 'timeout') {
        round.calls[i]!.then(
          (late) => (late === null ? locks[i]!.sendRelease(owner, 0, UNDO_RECORD_MS) : undefined),
          () => undefined,
        ).catch(() => undefined);
      }
    });
  }
  const targets = reentrant ? grantedNow : locks.map((_, i) => i);
  await fanOut(
    targets.length,
    (j) => locks[targets[j]!]!.sendRelease(owner, 0, UNDO_RECORD_MS),
    nodeTimeoutMs,
    (answers) => targets.every((node, j) => !grantedNow.includes(node) || answers[j] !== undefined),
  );
}

/**
 * Sleeps after a failed round, never past the deadline. When other owners hold so many nodes
 * that no majority is possible, until a node publishes a release or enough holders expire;
 * otherwise (a split vote, failed nodes, or a refusing node whose notices could not reach us
 * yet) a random delay, so that clients that failed together do not retry together. Never
 * sooner than a random moment either: releases of other waiters' partial grants also
 * publish, and must not make the waiters spin.
 */
export async function pauseAfter(
  nodes: RoundNodes,
  attempt: Attempt,
  queues: readonly WaiterQueue[],
  deadline: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const failedAt = performance.now();
  // A subscription that failed (its node was down) is tried again, in the background.
  if (attempt.deaf) void subscribeAll(queues);
  await sleepUntil(Math.min(deadline, failedAt + Math.random() * 2 * nodes.nodeTimeoutMs), signal);
  const until = Math.min(deadline, failedAt + attempt.freeInMs);
  if (attempt.busy && !attempt.deaf && until > performance.now()) {
    await sleepOnQueues(queues, until - performance.now(), signal);
  }
}

/** The wait is over: leave every node's local waiter queue (and its waiter set where still registered). */
export function leaveQueues(nodes: RoundNodes, queues: readonly WaiterQueue[], won: Attempt | undefined): void {
  queues.forEach((queue, i) => {
    const answer = won?.round.answers[i];
    // Registered as a waiter where the winning round was refused: leave now, unless others
    // of this client still wait there, rather than when the waiter set expires.
    if (answer?.kind === 'answered' && answer.value !== null && !queue.othersWaiting) {
      const node = nodes.locks[i]!;
      node.core.scripts.lock.leaveWaiterSet(exclusiveWait(node.keys), node.core.waiters.listenerId).catch(() => undefined);
    }
    queue.leave(won !== undefined);
  });
}


/** Subscribes every queue's wake-up channel (those not subscribed yet); settles when all did or failed. */
export async function subscribeAll(queues: readonly WaiterQueue[]): Promise<void> {
  await Promise.allSettled(queues.map((queue) => queue.subscribe()));
}

/** Resolves at `until` (performance.now() ms); rejects with the signal's reason on abort. */
async function sleepUntil(until: number, signal: AbortSignal | undefined): Promise<void> {
  if (until <= performance.now()) return;
  await raceDeadline(new Promise<never>(() => undefined), until, signal);
}

/** Sleeps until any of the queues is woken by a notice, `ms` pass, or the signal aborts. */
async function sleepOnQueues(queues: readonly WaiterQueue[], ms: number, signal: AbortSignal | undefined): Promise<void> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const sleeps = queues.map((queue) => queue.sleep(ms, stop.signal));
  // Sleepers of the other queues are stopped below; their rejections are expected.
  for (const sleep of sleeps) sleep.catch(() => undefined);
  try {
    await Promise.race(sleeps);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
