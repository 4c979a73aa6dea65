import { LockReplicationError, type LockLostReason } from './errors.js';
import { RENEW_BATCH_SIZE, RENEW_RETRY_MS } from './options.js';
import type { LockScripts, RenewScript, ReplicaAck } from './scripts/registry.js';
import type { Topology } from './topology.js';

/** What the watchdog renews for one hold, and with which batched script. */
export interface RenewTarget {
  /** The lock's name, for events. */
  readonly name: string;
  /** The batched script that renews it. */
  readonly script: RenewScript;
  /** The keys that script needs for this hold (all in the lock's hash slot). */
  readonly keys: readonly string[];
  /** Who holds, as the script knows it: the owner id, or `r:`/`w:` + owner id on a read-write lock. */
  readonly holder: string;
}

/** One watchdog-mode hold (lock, owner[, read or write]): re-entrant holds share it. */
export interface WatchedHold {
  readonly target: RenewTarget;
  readonly owner: string;
  /** Leases to abort when the hold is lost. */
  readonly leases: Set<AbortController>;
  /**
   * Releases sent and not yet answered: a renewal that finds the lock gone meanwhile is no loss.
   * On one connection replies come back in order, so the release's reply (which drops the hold)
   * always comes first; this guards where they may not, e.g. a Cluster redirect resending a call.
   */
  releasing: number;
  /** When the last successful renewal (or the acquisition) was sent, performance.now() ms. */
  renewedAt: number;
}

export interface WatchdogListener {
  renewed(hold: WatchedHold): void;
  lost(hold: WatchedHold, reason: LockLostReason): void;
  error(error: unknown): void;
}

const RENEWED = 1;
const GONE = 0;

function holdId(target: RenewTarget): string {
  return `${target.script}\u0000${target.keys.join('\u0000')}\u0000${target.holder}`;
}

export interface WatchdogConfig {
  readonly scripts: LockScripts;
  readonly leaseMs: number;
  /** Where holds are batched: one group per node (or slot) on a Cluster. */
  readonly topology: () => Topology;
  /** Renewals must reach this many replicas too (WAIT in the same round trip). */
  readonly syncReplicas: ReplicaAck | undefined;
  readonly listener: WatchdogListener;
}

/**
 * Keeps watchdog-mode locks alive: ONE timer per client renews every held (lock, owner) in
 * batched script calls every third of the lease: one call per script kind and node (Redis 7
 * Cluster) or slot per batch. Ticks never overlap (the next is scheduled when the last batch
 * is answered). A renewal error is retried soon; the hold is declared lost once its lease must
 * have run out.
 */
export class Watchdog {
  readonly #scripts: LockScripts;
  readonly #leaseMs: number;
  readonly #topology: () => Topology;
  readonly #syncReplicas: ReplicaAck | undefined;
  readonly #listener: WatchdogListener;
  readonly #holds = new Map<string, WatchedHold>();
  #timer: NodeJS.Timeout | undefined;
  #ticking = false;
  #closed = false;

  constructor(config: WatchdogConfig) {
    this.#scripts = config.scripts;
    this.#leaseMs = config.leaseMs;
    this.#topology = config.topology;
    this.#syncReplicas = config.syncReplicas;
    this.#listener = config.listener;
  }

  /** Starts (or joins) renewal of `owner`'s hold acquired at `acquiredAt` (performance.now()). */
  track(target: RenewTarget, owner: string, acquiredAt: number): WatchedHold {
    const id = holdId(target);
    let hold = this.#holds.get(id);
    if (!hold) {
      hold = { target, owner, leases: new Set(), releasing: 0, renewedAt: acquiredAt };
      this.#holds.set(id, hold);
    } else {
      hold.renewedAt = Math.max(hold.renewedAt, acquiredAt);
    }
    this.#schedule(this.#leaseMs / 3);
    return hold;
  }

  get(target: RenewTarget): WatchedHold | undefined {
    return this.#holds.get(holdId(target));
  }

  beginRelease(target: RenewTarget): void {
    const hold = this.get(target);
    if (hold) hold.releasing += 1;
  }

  /** `remaining` is the hold count left, or undefined when the release failed. */
  endRelease(target: RenewTarget, remaining: number | undefined): void {
    const hold = this.get(target);
    if (!hold) return;
    hold.releasing -= 1;
    if (remaining !== undefined && remaining <= 0) this.#holds.delete(holdId(target));
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#holds.clear();
  }

  #schedule(delayMs: number): void {
    if (this.#closed || this.#ticking || this.#timer || this.#holds.size === 0) return;
    this.#timer = setTimeout(() => void this.#tick(), delayMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    this.#ticking = true;
    let failed = false;
    try {
      // Each batch goes to one script and one node (or slot): reentrant and read-write holds
      // apart, and on a Cluster the holds of one node together.
      const topology = this.#topology();
      const groups = new Map<string, WatchedHold[]>();
      for (const hold of this.#holds.values()) {
        const group = `${hold.target.script}\u0000${topology.renewalGroup(hold.target.keys[0]!)}`;
        const members = groups.get(group);
        if (members) members.push(hold);
        else groups.set(group, [hold]);
      }
      const batches: WatchedHold[][] = [];
      for (const holds of groups.values()) {
        for (let i = 0; i < holds.length; i += RENEW_BATCH_SIZE) batches.push(holds.slice(i, i + RENEW_BATCH_SIZE));
      }
      const crossSlot = topology.cluster && topology.crossSlotScripts;
      const outcomes = await Promise.all(batches.map((batch) => this.#renew(batch, crossSlot)));
      failed = outcomes.includes(false);
    } finally {
      this.#ticking = false;
      this.#schedule(failed ? Math.min(RENEW_RETRY_MS, this.#leaseMs / 3) : this.#leaseMs / 3);
    }
  }

  /** Renews one batch; false when the call failed. */
  async #renew(batch: WatchedHold[], crossSlot: boolean): Promise<boolean> {
    const sentAt = performance.now();
    let results: number[];
    try {
      const renewal = await this.#scripts.renewMany(
        batch[0]!.target.script,
        batch.flatMap((hold) => hold.target.keys),
        batch.map((hold) => hold.target.holder),
        this.#leaseMs,
        crossSlot,
        this.#syncReplicas,
      );
      results = renewal.results;
      const wanted = this.#syncReplicas?.replicas ?? 0;
      if (renewal.acks !== undefined && renewal.acks < wanted) {
        // Renewed on the master, but a failover now could lose it: say so, keep renewing.
        this.#listener.error(
          new LockReplicationError(
            `renewal of ${batch.length} lock(s) reached ${renewal.acks} of ${wanted} replicas`,
            renewal.acks,
            wanted,
          ),
        );
      }
    } catch (error) {
      if (this.#closed) return true;
      this.#listener.error(error);
      const now = performance.now();
      for (const hold of batch) {
        if (this.#isCurrent(hold) && now - hold.renewedAt >= this.#leaseMs) this.#lose(hold, 'expired');
      }
      return false;
    }
    batch.forEach((hold, i) => {
      // Released (or re-tracked) while the call was in flight: its answer says nothing now.
      if (!this.#isCurrent(hold)) return;
      if (results[i] === RENEWED) {
        hold.renewedAt = sentAt;
        this.#listener.renewed(hold);
      } else if (hold.releasing === 0) {
        this.#lose(hold, results[i] === GONE ? 'deleted' : 'taken');
      }
    });
    return true;
  }

  #isCurrent(hold: WatchedHold): boolean {
    return !this.#closed && this.#holds.get(holdId(hold.target)) === hold;
  }

  #lose(hold: WatchedHold, reason: LockLostReason): void {
    this.#holds.delete(holdId(hold.target));
    this.#listener.lost(hold, reason);
  }
}
