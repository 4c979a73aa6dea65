import type { LockContext } from '../context.js';
import { LockClientClosedError, LockLostError, RedLockQuorumError, type LockError, type LockLostReason, type RedLockNodeFailure } from '../errors.js';
import type { Hold, HoldEnd, HoldObserver } from '../holding/holds.js';
import type { FanOutResult } from './fan-out.js';

export interface RedHoldConfig {
  readonly lockName: string;
  readonly nodes: number;
  readonly quorum: number;
  /** Registers what to do when the first lock's client (which speaks for the RedLock) closes. */
  whenHomeCloses(onClose: () => void): () => void;
  /** Renewals allowed per node; undefined: no cap. */
  readonly maxRenewals: number | undefined;
  renewed(): void;
  lost(reason: LockLostReason): void;
  /** The hold ended (released, lost, expired, client closed): forget it. */
  forget(hold: RedHold): void;
}

/**
 * One owner's hold on one RedLock in this process: its re-entry count, its leases, and one node
 * hold per node that granted it. The node holds live in their own clients' hold records: each
 * client's watchdog renews them in its batched calls, each has the holder's clock. This hold
 * follows them: it counts as renewed when a majority of nodes confirmed a renewal, and it is
 * lost when fewer than a majority of node holds remain (taken, deleted, or their clock ran out).
 */
export class RedHold {
  /** Holds of the owner: re-entries count. */
  count = 0;
  /** Releases in flight: node holds that end meanwhile are no loss. */
  releasing = 0;
  /** Leases to abort when the hold is lost or expires. */
  readonly leases = new Set<AbortController>();
  /** Late answers that may still add node holds (see joinLate). */
  readonly joining = new Set<Promise<void>>();
  /** Handed off to another process: its Leases' release() changes nothing. */
  movedAway = false;
  /** Called once when the hold ends (lib/redlock/cap-red-hold.ts clears its timer). */
  onEnd: (() => void) | undefined;
  /** The lock context the owner id is of, in the process that took the hold: its hand-off bars that context. */
  context: LockContext | undefined;
  readonly #config: RedHoldConfig;
  /** Per node: its live hold of this owner, if any. */
  readonly #members: (Hold | undefined)[];
  /** Per node: why its hold ended, when it did. */
  readonly #endedWhy: HoldEnd[];
  /** Per node: confirmed renewals. */
  readonly #renewals: number[];
  #reportedRenewals = 0;
  #watchdog = false;
  #ended = false;
  /** How the node holds tell this hold about themselves. */
  readonly #observer: HoldObserver = {
    renewed: (hold) => this.#nodeRenewed(hold),
    ended: (hold, why) => this.#nodeEnded(hold, why),
  };

  /** Stops listening for the home client's close. */
  readonly #stopWatchingHome: () => void;

  constructor(config: RedHoldConfig) {
    this.#config = config;
    this.#stopWatchingHome = config.whenHomeCloses(() => this.#lost('closed'));
    this.#members = new Array<Hold | undefined>(config.nodes).fill(undefined);
    this.#endedWhy = new Array<HoldEnd>(config.nodes).fill(undefined);
    this.#renewals = new Array<number>(config.nodes).fill(0);
  }

  /** Renewed in watchdog mode (a re-entry with a fixed lease does not stop that). */
  get watchdog(): boolean {
    return this.#watchdog;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Whether `node` has a live hold of this owner. */
  holds(node: number): boolean {
    return this.#members[node] !== undefined;
  }

  /** `node`'s live hold of this owner (its client's record), if any. */
  member(node: number): Hold | undefined {
    return this.#members[node];
  }

  /**
   * Held for its `maxHoldTime`: no node renews it any more, its Leases abort with `error` and
   * `lost` ('max-hold-time') is emitted; only then `letGo(node, member)` lets go of each node hold.
   */
  capped(error: LockLostError, letGo: (node: number, member: Hold) => void): void {
    if (this.#ended) return;
    const members = [...this.#members];
    for (const member of members) if (member) member.stopRenewing();
    this.#lose('max-hold-time', error);
    members.forEach((member, node) => member && letGo(node, member));
  }

  /** Handed off to another process: forgotten here, its Leases abort with `error` (LockHandedOffError). */
  handedOff(error: LockError): void {
    this.movedAway = true;
    this.#abort(error);
  }

  /**
   * An acquisition round was won: `track(node)` makes the hold record of each node that granted.
   * A node whose answer was not awaited (or timed out) may still grant: then its hold joins too,
   * or, when this hold has ended by then, `letGo(node)` releases it at once.
   */
  won(round: FanOutResult<number | null>, track: (node: number) => Hold, letGo: (node: number) => void, watchdog: boolean): void {
    const granted = new Map<number, Hold>();
    round.answers.forEach((answer, node) => {
      if (answer?.kind === 'answered' && answer.value === null) granted.set(node, track(node));
      else if (answer === undefined || answer.kind === 'timeout') {
        this.joinLate(
          round.calls[node]!.then(
            (late) => {
              if (late !== null) return;
              if (this.#ended) letGo(node);
              else this.joined(node, track(node));
            },
            () => undefined,
          ),
        );
      }
    });
    this.acquired(granted, watchdog);
  }

  /** An acquisition (or re-entry) was granted by a majority; `granted` are its node holds. */
  acquired(granted: ReadonlyMap<number, Hold>, watchdog: boolean): void {
    this.count += 1;
    if (watchdog) this.#watchdog = true;
    for (const [node, hold] of granted) {
      if (this.#members[node] === hold) continue;
      this.#members[node] = hold;
      this.#endedWhy[node] = undefined;
      hold.observe(this.#observer);
    }
  }

  /**
   * A node's answer that came after its round was decided, and may add a node hold: a move of the
   * hold (extend, handOff) waits for it a little, so that it moves that node's hold too.
   */
  joinLate(answer: Promise<void>): void {
    const tracked: Promise<void> = answer.finally(() => this.joining.delete(tracked));
    this.joining.add(tracked);
  }

  /** A node granted the acquisition after the round was decided: its hold counts too. */
  joined(node: number, hold: Hold): void {
    if (this.#members[node] === hold) return;
    this.#members[node] = hold;
    this.#endedWhy[node] = undefined;
    hold.observe(this.#observer);
  }

  /** One hold was released; true when it was the last. */
  released(): boolean {
    this.count -= 1;
    if (this.count <= 0) this.end();
    return this.#ended;
  }

  /**
   * A release of one of the owner's holds settled and holds are left: node holds that ended while
   * it was out were no loss then (they might have been its own). If fewer than a majority remain
   * now, the holds left are lost: their Leases abort, not only the release that found out.
   */
  settled(): void {
    if (this.#ended || this.releasing > 0 || this.count <= 0) return;
    if (this.#members.filter((member) => member !== undefined).length >= this.#config.quorum) return;
    this.#lost(this.#endedWhy.find((why) => why !== undefined) ?? 'expired');
  }

  /** The hold is forgotten (its node holds go their own way: released, or left to expire). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopWatchingHome();
    this.onEnd?.();
    this.#config.forget(this);
  }

  #nodeRenewed(hold: Hold): void {
    const node = this.#members.indexOf(hold);
    if (node === -1 || this.#ended) return;
    this.#renewals[node]! += 1;
    // Renewal k counts once a majority of nodes have been renewed k times.
    const next = this.#reportedRenewals + 1;
    if (this.#renewals.filter((renewals) => renewals >= next).length >= this.#config.quorum) {
      this.#reportedRenewals = next;
      this.#config.renewed();
    }
  }

  #nodeEnded(hold: Hold, why: HoldEnd): void {
    const node = this.#members.indexOf(hold);
    if (node === -1) return;
    this.#members[node] = undefined;
    this.#endedWhy[node] = why;
    if (this.#ended || this.releasing > 0 || why === undefined) return;
    const live = this.#members.filter((member) => member !== undefined).length;
    if (live >= this.#config.quorum) return;
    this.#lost(why);
  }

  #lost(why: Exclude<HoldEnd, undefined>): void {
    if (this.#ended) return;
    const { lockName, maxRenewals } = this.#config;
    if (why === 'closed') {
      // No longer renewed anywhere: the node holds left run out with their lease.
      for (const member of this.#members) if (member) member.stopRenewing();
      this.#abort(new LockClientClosedError(`the LockClient was closed: RedLock "${lockName}" is no longer renewed`));
      return;
    }
    if (!this.#watchdog) {
      // As with a plain lock: the end of a fixed lease is news only to a Lease holder.
      if (this.leases.size === 0) this.end();
      else this.#lose('expired', new LockLostError(`lease of RedLock "${lockName}" ran out before release`, 'expired', { lockName }));
    } else if (maxRenewals !== undefined && this.#reportedRenewals >= maxRenewals && why === 'expired') {
      const message = `RedLock "${lockName}" expired after its last allowed renewal (maxRenewals: ${maxRenewals})`;
      this.#lose('expired', new LockLostError(message, 'expired', { lockName }));
    } else {
      const message = `RedLock "${lockName}" was lost: fewer than a majority of its nodes still hold it for this owner`;
      this.#lose('quorum', new LockLostError(message, 'quorum', { lockName, cause: this.#quorumError() }));
    }
  }

  /** What the nodes' holds came to: live (granted), taken or deleted (refused), expired (failed). */
  #quorumError(): RedLockQuorumError {
    const failures: RedLockNodeFailure[] = [];
    let granted = 0;
    let refused = 0;
    this.#members.forEach((member, node) => {
      const why = this.#endedWhy[node];
      if (member !== undefined) granted += 1;
      else if (why === 'taken' || why === 'deleted') refused += 1;
      else failures.push({ node, reason: 'timeout' });
    });
    const { nodes, quorum } = this.#config;
    return new RedLockQuorumError(
      { operation: 'renew', nodes, quorum, granted, refused, failures, unanswered: 0, elapsedMs: 0, attempts: 1 },
      { lockName: this.#config.lockName },
    );
  }

  #lose(reason: LockLostReason, error: LockError): void {
    this.#abort(error);
    this.#config.lost(reason);
  }

  #abort(error: LockError): void {
    this.end();
    for (const lease of this.leases) lease.abort(error);
  }
}
