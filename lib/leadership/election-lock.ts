import type { LockCore } from '../core.js';
import type { RenewTarget } from '../holding/holds.js';
import { BaseLock } from '../locks/base-lock.js';
import { waitNonFair } from '../waiting/non-fair-wait.js';
import type { CallRequest, HeldRequest, HoldsLeft } from '../scripts/registry.js';
import type { Acquired } from '../waiting/wait.js';
import type { ElectionKeys } from '../keys.js';
import type { ElectionScripts } from '../scripts/election-scripts.js';
import { KINDS } from '../kinds.js';

/**
 * One campaign as a lock: a fenced lock on the election's hash whose acquisition also publishes
 * `value` and announces the new leader, and whose release announces the vacancy. Waiting,
 * watchdog renewal, the holder's clock, Leases and release with retry are the locks' own.
 * One instance per campaign (it carries the campaign's value); every campaign has a fresh owner.
 */
export class ElectionLock extends BaseLock {
  readonly electionKeys: ElectionKeys;
  readonly #scripts: ElectionScripts;
  readonly #value: string;

  constructor(core: LockCore, keys: ElectionKeys, value: string) {
    super(core, keys.name, 'election');
    this.electionKeys = keys;
    this.#scripts = core.scripts.election;
    this.#value = value;
  }

  /** Readable by the Leadership: the core its calls go through. */
  get lockCore(): LockCore {
    return this.core;
  }

  protected override renewTarget(owner: string): RenewTarget {
    // The election's hash has the lock hash's layout (owner id → hold count): the lock's batched renewal serves it.
    return { name: this.name, script: KINDS.election.renew, keys: [this.electionKeys.election], holder: owner };
  }

  protected override acquireFor(owner: string, waitMs: number | undefined, leaseMs: number, signal: AbortSignal | undefined): Promise<Acquired | false> {
    const { core } = this;
    const ttlMs = this.ttlFor(leaseMs);
    return waitNonFair(core, this.electionKeys.wait, waitMs, signal, (mode) => this.request(owner, async (request) => {
      const sentAt = performance.now();
      const reply = await this.#scripts.campaign(this.electionKeys, owner, ttlMs, core.waiters.listenerId, mode, request, this.#value, core.publish);
      return 'epoch' in reply ? { acquired: true, sentAt, token: reply.epoch } : { acquired: false, ttlMs: reply.ttlMs };
    }), () => this.abandon(owner));
  }

  protected override releaseFor(owner: string, reExpireMs: number, held: HeldRequest | undefined, recordMs: number): Promise<HoldsLeft> {
    return this.request(owner, (request) => this.#scripts.resign(this.electionKeys, owner, reExpireMs, request, this.core.publish, recordMs), held);
  }

  /** The election's calls log in its own hash: their requests come from its window. */
  protected override request<T>(owner: string | undefined, send: (request: CallRequest) => Promise<T>, held?: HeldRequest): Promise<T> {
    return this.core.scripts.requests.send(this.electionKeys.election, owner, send, held);
  }

  /** True while this client's record says `owner` leads (its holder's clock has not run out). */
  leads(owner: string): boolean {
    return this.holdOf(owner) !== undefined;
  }
}
