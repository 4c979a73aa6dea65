import { LockReplicationError, type LockLostReason } from './errors.js';
import type { LockKeys } from './keys.js';
import { RENEW_BATCH_SIZE, RENEW_RETRY_MS } from './options.js';
import type { LockScripts, ReplicaAck } from './scripts/registry.js';
import type { Topology } from './topology.js';

/** One watchdog-mode (lock, owner) pair: re-entrant holds share it. */
export interface WatchedHold {
  readonly keys: LockKeys;
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

function holdId(keys: LockKeys, owner: string): string {
  return `${keys.lock}\u0000${owner}`;
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
 * batched script calls every third of the lease, one call per node (Redis 7 Cluster) or slot
 * per batch. Ticks never overlap (the next is scheduled when the last batch is answered). A
 * renewal error is retried soon; the hold is declared lost once its lease must have run out.
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

  get size(): number {
    return this.#holds.size;
  }

  /** Starts (or joins) renewal of a (lock, owner) acquired at `acquiredAt` (performance.now()). */
  track(keys: LockKeys, owner: string, acquiredAt: number): WatchedHold {
    const id = holdId(keys, owner);
    let hold = this.#holds.get(id);
    if (!hold) {
      hold = { keys, owner, leases: new Set(), releasing: 0, renewedAt: acquiredAt };
      this.#holds.set(id, hold);
    } else {
      hold.renewedAt = Math.max(hold.renewedAt, acquiredAt);
    }
    this.#schedule(this.#leaseMs / 3);
    return hold;
  }

  get(keys: LockKeys, owner: string): WatchedHold | undefined {
    return this.#holds.get(holdId(keys, owner));
  }

  beginRelease(keys: LockKeys, owner: string): void {
    const hold = this.get(keys, owner);
    if (hold) hold.releasing += 1;
  }

  /** `remaining` is the hold count left, or undefined when the release failed. */
  endRelease(keys: LockKeys, owner: string, remaining: number | undefined): void {
    const hold = this.get(keys, owner);
    if (!hold) return;
    hold.releasing -= 1;
    if (remaining !== undefined && remaining <= 0) this.#holds.delete(holdId(keys, owner));
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
      const topology = this.#topology();
      const groups = new Map<string, WatchedHold[]>();
      for (const hold of this.#holds.values()) {
        const group = topology.renewalGroup(hold.keys.lock);
        const members = groups.get(group);
        if (members) members.push(hold);
        else groups.set(group, [hold]);
      }
      const batches: WatchedHold[][] = [];
      for (const members of groups.values()) {
        for (let i = 0; i < members.length; i += RENEW_BATCH_SIZE) batches.push(members.slice(i, i + RENEW_BATCH_SIZE));
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
        batch.map((hold) => hold.keys.lock),
        batch.map((hold) => hold.owner),
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
    return !this.#closed && this.#holds.get(holdId(hold.keys, hold.owner)) === hold;
  }

  #lose(hold: WatchedHold, reason: LockLostReason): void {
    this.#holds.delete(holdId(hold.keys, hold.owner));
    this.#listener.lost(hold, reason);
  }
}
