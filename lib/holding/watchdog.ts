import { LockLostError, LockReplicationError, toLockError, type LockLostReason } from '../errors.js';
import type { Hold, Holds } from './holds.js';
import { RENEW_BATCH_SIZE, RENEW_RETRY_MS } from '../options.js';
import type { LockScripts, ReplicaAck } from '../scripts/registry.js';
import type { Topology } from '../redis/topology.js';
import { renewFailed } from '../telemetry/hold-channels.js';

export type { RenewTarget } from './holds.js';

export interface WatchdogListener {
  renewed(hold: Hold): void;
  error(error: unknown): void;
}

const RENEWED = 1;
const GONE = 0;

export interface WatchdogConfig {
  readonly scripts: LockScripts;
  readonly holds: Holds;
  readonly leaseMs: number;
  /** Where holds are batched: one group per node (or slot) on a Cluster. */
  readonly topology: () => Topology;
  /** Renewals must reach this many replicas too (WAIT in the same round trip). */
  readonly syncReplicas: ReplicaAck | undefined;
  readonly listener: WatchdogListener;
  /** The LockClient's id, for telemetry. */
  readonly clientId?: string;
  /** Whether the renewal thread renews this hold now (then the watchdog leaves it alone). */
  readonly renewedElsewhere?: (hold: Hold) => boolean;
}

/**
 * Keeps watchdog-mode holds alive: ONE timer per client renews every such hold in batched
 * script calls every third of the lease: one call per script kind and node (Redis 7 Cluster) or
 * slot per batch. A tick never waits for the previous one's answers: a call that hangs on a
 * silent connection blocks no later renewal, and the holder's clock (see Holds) tells the holder
 * when its lease may have run out. A failed renewal is retried soon.
 */
export class Watchdog {
  readonly #config: WatchdogConfig;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;
  #closed = false;

  constructor(config: WatchdogConfig) {
    this.#config = config;
  }

  /** A watchdog-mode hold was acquired: make sure a tick is due within a third of the lease. */
  kick(): void {
    this.#schedule(this.#config.leaseMs / 3);
  }

  /** The renewal thread is gone: renew every watchdog-mode hold now, then as usual. */
  renewNow(): void {
    this.#schedule(0);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Makes the next tick come no later than `delayMs` from now. */
  #schedule(delayMs: number): void {
    if (this.#closed) return;
    const at = performance.now() + delayMs;
    if (this.#timer && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#tick(), delayMs);
    this.#timer.unref();
  }

  #tick(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const { holds, topology: currentTopology, leaseMs, renewedElsewhere } = this.#config;
    // Each batch goes to one script and one node (or slot): reentrant and read-write holds
    // apart, and on a Cluster the holds of one node together.
    const topology = currentTopology();
    const groups = new Map<string, Hold[]>();
    for (const hold of holds.watched()) {
      if (renewedElsewhere?.(hold)) continue;
      const group = `${hold.target.script}\u0000${topology.renewalGroup(hold.target.keys[0]!)}`;
      const members = groups.get(group);
      if (members) members.push(hold);
      else groups.set(group, [hold]);
    }
    if (groups.size === 0) return;
    const crossSlot = topology.cluster && topology.crossSlotScripts;
    for (const members of groups.values()) {
      for (let i = 0; i < members.length; i += RENEW_BATCH_SIZE) void this.#renew(members.slice(i, i + RENEW_BATCH_SIZE), crossSlot);
    }
    this.#schedule(leaseMs / 3);
  }

  /** Renews one batch; a failure is reported and retried soon. */
  async #renew(batch: Hold[], crossSlot: boolean): Promise<void> {
    const { scripts, holds, leaseMs, syncReplicas, listener } = this.#config;
    const sentAt = performance.now();
    let results: number[];
    try {
      const renewal = await scripts.renewal.renewMany(
        batch[0]!.target.script,
        batch.flatMap((hold) => hold.target.keys),
        batch.map((hold) => hold.target.holder),
        leaseMs,
        crossSlot,
        syncReplicas,
      );
      results = renewal.results;
      const wanted = syncReplicas?.replicas ?? 0;
      if (renewal.acks !== undefined && renewal.acks < wanted) {
        // Renewed on the master, but a failover now could lose it: say so, keep renewing.
        const message = `renewal of ${batch.length} hold(s) reached ${renewal.acks} of ${wanted} replicas`;
        listener.error(new LockReplicationError(message, renewal.acks, wanted));
      }
    } catch (error) {
      if (this.#closed) return;
      const failure = toLockError(error, 'renew', undefined);
      renewFailed(this.#config.clientId ?? '', batch, failure);
      listener.error(failure);
      this.#schedule(Math.min(RENEW_RETRY_MS, leaseMs / 3));
      return;
    }
    batch.forEach((hold, i) => {
      // Released, lost, or taken again while the call was out: its answer says nothing now.
      if (this.#closed || !holds.isCurrent(hold)) return;
      if (results[i] === RENEWED) {
        holds.renewed(hold, sentAt, leaseMs);
        if (!hold.quiet) listener.renewed(hold);
      } else if (hold.releasing === 0 && hold.held) {
        const reason: LockLostReason = results[i] === GONE ? 'deleted' : 'taken';
        const message = `${hold.object} "${hold.target.name}" was lost (${reason})`;
        holds.lose(hold, reason, new LockLostError(message, reason, { lockName: hold.target.name }));
      }
    });
  }
}
