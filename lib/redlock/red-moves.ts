import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, LockError, LockHandedOffError, LockLostError, LockRedisError } from '../errors.js';
import type { Hold } from '../holding/holds.js';
import { adoptHold, type AdoptedHold } from '../lease/adopt.js';
import { checkLeaseHandle, type LeaseHandle } from '../lease/lease-handle.js';
import { extendHold, handOffHold } from '../lease/lease-moves.js';
import type { Lease, LeaseMovesInit } from '../lease/lease.js';
import type { RedNode } from './red-node.js';
import type { RLock } from '../locks/lock-interfaces.js';
import { checkLeaseTime, checkAdoptOptions, checkObject, checkPositiveDuration, WATCHDOG_LEASE } from '../validate.js';
import { raceDeadline } from '../waiting/wait.js';
import type { RoundNodes } from './acquire-round.js';
import { fanOut, type FanOutResult } from './fan-out.js';
import { certain, driftOf, quorumError, tally, type Tally, type Verdict } from './quorum.js';
import type { RedHold } from './red-hold.js';
import { redHoldFor, unscopedKeyOf, type RedLockIdentity } from './red-holds.js';
import { capRedHold } from './cap-red-hold.js';

/** What a RedLock's lease moves need of it. */
export interface RedLockParts extends RedLockIdentity {
  readonly nodes: readonly RedNode[];
  /** The locks it was built over (a node's lock name, and its HoldAccess). */
  readonly locks: readonly RLock[];
  readonly round: RoundNodes;
  /** The Lease of `owner`'s hold; `release` instead of one release of it. */
  lease(owner: string, hold: RedHold, release?: () => Promise<void>): Lease;
  /** Releases one hold of `owner` on every node (the RedLock's release). */
  release(owner: string): Promise<void>;
}

/** A RedLock's parts: its identity from its nodes, and how it makes Leases and releases. */
export function redLockParts(
  name: string,
  locks: readonly RLock[],
  round: RoundNodes,
  maxRenewals: number | undefined,
  calls: Pick<RedLockParts, 'lease' | 'release'>,
): RedLockParts {
  const nodes = round.locks;
  return {
    name,
    id: nodes.map((node) => `${node.core.clientId}/${node.keys.lock}`).join('\n'),
    nodeCount: nodes.length,
    quorum: round.quorum,
    maxRenewals,
    home: nodes[0]!.core,
    nodes,
    locks,
    round,
    lease: calls.lease,
    release: calls.release,
  };
}

type MoveOperation = 'extend' | 'handOff' | 'adopt';

const someIsYes = (value: unknown): Verdict => (value === null ? 'no' : 'yes');

/** A node's answer; null when the node said the hold is gone there (a LockLostError). */
async function goneAsNull<T>(call: Promise<T | null>): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof LockLostError) return null;
    throw error;
  }
}

/**
 * One move on every node at once, each awaited at most `nodeTimeout`, decided by the majority
 * rule; `everyNode`: every answer is awaited (up to that timeout), not only until the outcome is certain.
 */
async function roundOf<T>(
  parts: RedLockParts,
  call: (node: number) => Promise<T | null>,
  everyNode = false,
): Promise<{ round: FanOutResult<T | null>; counted: Tally }> {
  const round = await fanOut(
    parts.nodeCount,
    (node) => goneAsNull(call(node)),
    parts.round.nodeTimeoutMs,
    (answers) => !everyNode && certain(tally(answers, someIsYes), parts.nodeCount),
  );
  return { round, counted: tally(round.answers, someIsYes) };
}

/** Per node: its answer's value, null when it said no, failed or was not awaited. */
function valuesOf<T>(round: FanOutResult<T | null>): (T | null)[] {
  return round.answers.map((answer) => (answer?.kind === 'answered' ? answer.value : null));
}

/** The `quorum`-th largest of `values` (what a majority has at least); -Infinity with fewer. */
function majorityOf(values: number[], quorum: number): number {
  return values.sort((a, b) => b - a)[quorum - 1] ?? -Infinity;
}

const WHY_LOST: Record<MoveOperation, string> = {
  extend: 'is no longer held: a majority of its nodes no longer hold it',
  handOff: 'is no longer held: a majority of its nodes no longer hold it',
  adopt: 'cannot be adopted: a majority of its nodes had it adopted already, or it ended',
};

/**
 * A move without a majority: LockLostError when a majority said the hold is gone, otherwise a
 * LockRedisError (nodes failed or answered too late); either way `cause` is the round's
 * RedLockQuorumError.
 */
function moveFailed<T>(parts: RedLockParts, operation: MoveOperation, round: FanOutResult<T>, counted: Tally, validityMs: number): LockError {
  const { name, quorum } = parts;
  const cause = quorumError(operation, name, round, counted, { validityMs: counted.yes >= quorum ? Math.floor(validityMs) : undefined });
  if (counted.no >= quorum) return new LockLostError(`RedLock "${name}" ${WHY_LOST[operation]}`, 'expired', { lockName: name, cause });
  const outcome = operation === 'adopt' ? 'it was not adopted' : 'the hold stays as it was';
  return new LockRedisError(`${operation} of RedLock "${name}" was not confirmed by a majority in time (${outcome}): ${cause.message}`, operation, {
    lockName: name,
    cause,
  });
}

/** Waits (at most `nodeTimeout`) for node answers that came late and may still add node holds. */
async function settleJoins(parts: RedLockParts, hold: RedHold): Promise<void> {
  if (hold.joining.size > 0) await raceDeadline(Promise.all(hold.joining), performance.now() + parts.round.nodeTimeoutMs);
}

function assertHeld(parts: RedLockParts, hold: RedHold): void {
  if (hold.ended || hold.count <= 0) {
    throw new LockLostError(`RedLock "${parts.name}" is no longer held: it was released, lost or handed off`, 'expired', { lockName: parts.name });
  }
  for (const node of parts.nodes) node.core.assertOpen();
}

/** Ends a node hold here and releases it there (this process no longer holds the RedLock). */
function letGoNode(parts: RedLockParts, node: number, member: Hold): void {
  const { holds } = parts.nodes[node]!.core;
  if (!holds.isCurrent(member)) return;
  holds.end(member);
  member.letGo?.(member.count);
}

/** Runs `move` as a call of `owner` on the RedLock: refused during its hand-off, which it refuses meanwhile (hold-calls.ts). */
async function asCallOf<T>(parts: RedLockParts, owner: string, move: () => Promise<T>): Promise<T> {
  const { calls } = parts.home.holds;
  const call = calls.enter(unscopedKeyOf(parts), owner, parts.name);
  try {
    return await move();
  } finally {
    calls.leave(call);
  }
}

/** `lease.extend(ms)` of a RedLock: every node holding it extends; a majority must confirm in time. */
async function extendRed(parts: RedLockParts, owner: string, hold: RedHold, ms: unknown): Promise<void> {
  const { name } = parts;
  if (ms === WATCHDOG_LEASE) throw new InvalidArgumentError('`ms` must be a lease of at least 50 ms, got -1', { lockName: name });
  const extendMs = checkLeaseTime(ms ?? Number.NaN, name);
  if (hold.watchdog) {
    throw new InvalidArgumentError(`RedLock "${name}" is held in watchdog mode: the watchdog keeps it, extend() is for a leaseTime`, { lockName: name });
  }
  assertHeld(parts, hold);
  const { round, counted } = await asCallOf(parts, owner, async () => {
    await settleJoins(parts, hold);
    assertHeld(parts, hold);
    return roundOf(parts, async (node) => {
      const member = hold.member(node);
      if (!member) return null;
      await extendHold(parts.nodes[node]!.core, member, extendMs);
      return true;
    });
  });
  // As for an acquisition: the new lease, less the time the round took and the clock drift.
  const validityMs = extendMs - (round.decidedAt - round.startedAt) - driftOf(extendMs);
  if (counted.yes >= parts.quorum && validityMs > 0) return;
  throw moveFailed(parts, 'extend', round, counted, validityMs);
}

/**
 * `lease.handOff()` of a RedLock: every node holding it hands its hold off; with a majority (and
 * time left) the handle carries one member per node and this process no longer holds it. Without,
 * the node holds handed off are adopted back, and the hold stays as it was.
 */
async function handOffRed(parts: RedLockParts, owner: string, hold: RedHold, options: unknown): Promise<LeaseHandle> {
  const raw = checkObject(options, 'options');
  if (raw.adoptWithin !== undefined) checkPositiveDuration(raw.adoptWithin, 'adoptWithin');
  assertHeld(parts, hold);
  // Refused while another call of the owner on the RedLock is under way; refuses them meanwhile.
  const { calls } = parts.home.holds;
  const call = calls.enterHandOff(unscopedKeyOf(parts), owner, `RedLock "${parts.name}"`, parts.name);
  return await handOffNodes(parts, owner, hold, raw).finally(() => calls.leaveHandOff(call));
}

async function handOffNodes(parts: RedLockParts, owner: string, hold: RedHold, raw: Record<string, unknown>): Promise<LeaseHandle> {
  const { name, quorum } = parts;
  await settleJoins(parts, hold);
  assertHeld(parts, hold);
  const members = parts.nodes.map((_, node) => hold.member(node));
  const { round, counted } = await roundOf(parts, (node) => {
    const member = members[node];
    return member ? handOffHold(parts.nodes[node]!.core, member, { kind: 'lock', name: parts.locks[node]!.name }, raw) : Promise.resolve(null);
    // Every node that holds it answers (in time) into the handle: the adopter gets all of them.
  }, true);
  const handles = valuesOf(round);
  const given = handles.filter((handle) => handle !== null);
  const expiresAt = majorityOf(given.map((handle) => handle.expiresAt), quorum);
  if (counted.yes < quorum || expiresAt <= Date.now()) {
    // Taken back: each node hold handed off (now, or by a late answer) is adopted again here.
    const reclaim = (node: number, handle: LeaseHandle): Promise<void> =>
      adoptHold(parts.nodes[node]!.core, parts.nodes[node]!, handle, { quiet: true, maxRenewals: hold.watchdog ? parts.maxRenewals : undefined }).then(
        (adopted) => (hold.ended ? letGoNode(parts, node, adopted.hold) : hold.joined(node, adopted.hold)),
        () => undefined,
      );
    round.calls.forEach((call, node) => {
      if (handles[node] === null) void call.then((late) => late && reclaim(node, late), () => undefined);
    });
    await Promise.all(handles.map((handle, node) => (handle ? reclaim(node, handle) : Promise.resolve())));
    hold.settled();
    throw moveFailed(parts, 'handOff', round, counted, expiresAt - Date.now());
  }
  hold.handedOff(new LockHandedOffError(`RedLock "${name}" was handed off to another process`, { lockName: name }));
  parts.home.holds.calls.markHandedOff(hold.context, unscopedKeyOf(parts));
  // This process no longer holds it: a node that did not hand its hold off in time lets go of it.
  round.calls.forEach((call, node) => {
    const member = members[node];
    if (handles[node] !== null || !member) return;
    goneAsNull(call).then(
      (late) => (late ? parts.nodes[node]!.letGo(owner)(late.holdCount) : letGoNode(parts, node, member)),
      () => letGoNode(parts, node, member),
    );
  });
  return {
    rlock: 1,
    kind: 'redlock',
    name,
    keyPrefix: parts.home.keyPrefix,
    owner,
    id: randomUUID(),
    holdCount: hold.count,
    leaseTime: hold.watchdog ? WATCHDOG_LEASE : Math.min(...given.map((handle) => handle.leaseTime)),
    expiresAt,
    members: handles,
  };
}

/** The moves of a RedLock Lease. */
export function redMoves(parts: RedLockParts, owner: string, hold: RedHold): LeaseMovesInit {
  return {
    extend: (ms) => extendRed(parts, owner, hold, ms),
    handOff: (options) => handOffRed(parts, owner, hold, options),
  };
}

function mismatch(parts: RedLockParts, why: string): InvalidArgumentError {
  return new InvalidArgumentError(`the handle is not for RedLock "${parts.name}" over these nodes: ${why}`, { lockName: parts.name });
}

/** The handle's member per node, once it is shown to be a handle of a RedLock over these nodes. */
function memberHandles(parts: RedLockParts, handle: LeaseHandle): readonly (LeaseHandle | null)[] {
  if (handle.kind !== 'redlock') {
    throw new InvalidArgumentError(`redLock.adopt() takes a RedLock's handle (kind "redlock"); a "${handle.kind}" handle is adopted with locks.adopt(handle)`, {
      lockName: parts.name,
    });
  }
  const members = handle.members!;
  if (members.length !== parts.nodeCount) throw mismatch(parts, `it has ${members.length} nodes, this RedLock ${parts.nodeCount}`);
  members.forEach((member, node) => {
    if (!member) return;
    const name = parts.locks[node]!.name;
    const { keyPrefix } = parts.nodes[node]!.core;
    if (member.name !== name || member.keyPrefix !== keyPrefix || member.owner !== handle.owner) {
      throw mismatch(parts, `its node ${node} is lock "${member.name}" (keyPrefix "${member.keyPrefix}"), this RedLock's is "${name}" (keyPrefix "${keyPrefix}")`);
    }
  });
  return members;
}

/**
 * `redLock.adopt(handle)`: every node's member is adopted through that node's client; with a
 * majority (and time left) this process holds the RedLock as its own (same owner and hold count),
 * renewed by the nodes' watchdogs in watchdog mode (its `maxHoldTime` counted from now) or kept to
 * its fixed lease. Without, what was adopted is let go.
 */
export async function adoptRed(parts: RedLockParts, value: unknown, options: unknown): Promise<Lease> {
  const handle = checkLeaseHandle(value);
  const maxHoldMs = checkAdoptOptions(options, parts.name);
  const members = memberHandles(parts, handle);
  for (const node of parts.nodes) node.core.assertOpen();
  const watchdog = handle.leaseTime === WATCHDOG_LEASE;
  const how = { quiet: true, maxRenewals: watchdog ? parts.maxRenewals : undefined };
  const { round, counted } = await roundOf<AdoptedHold>(parts, (node) => {
    const member = members[node];
    return member ? adoptHold(parts.nodes[node]!.core, parts.nodes[node]!, member, how) : Promise.resolve(null);
  });
  const adopted = valuesOf(round);
  const validUntil = majorityOf(adopted.flatMap((each) => (each ? [each.hold.validUntil] : [])), parts.quorum);
  if (counted.yes < parts.quorum || validUntil <= performance.now()) {
    for (const [node, call] of round.calls.entries()) void goneAsNull(call).then((each) => each && letGoNode(parts, node, each.hold), () => undefined);
    throw moveFailed(parts, 'adopt', round, counted, validUntil - performance.now());
  }
  const { owner } = handle;
  const hold = redHoldFor(parts, owner);
  hold.acquired(new Map(adopted.flatMap((each, node) => (each ? [[node, each.hold] as const] : []))), watchdog);
  hold.count = handle.holdCount;
  // A node that answered after the round was decided may have adopted too: its hold joins (or is let go).
  round.answers.forEach((answer, node) => {
    if (answer !== undefined && answer.kind !== 'timeout') return;
    hold.joinLate(
      goneAsNull(round.calls[node]!).then(
        (late) => void (late && (hold.ended ? letGoNode(parts, node, late.hold) : hold.joined(node, late.hold))),
        () => undefined,
      ),
    );
  });
  if (watchdog) capRedHold(hold, maxHoldMs ?? parts.home.maxHoldTimeMs, parts.nodes, parts.name);
  parts.home.events.emit('acquired', { name: parts.name, owner });
  // The adopted Lease stands for the whole hold: its release() releases every hold count.
  return parts.lease(owner, hold, async () => {
    while (!hold.ended && hold.count > 0) await parts.release(owner);
  });
}
