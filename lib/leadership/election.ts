import { runInNewContext } from '../context.js';
import type { LockCore } from '../core.js';
import { checkLockName, checkOptions, checkSignal, checkWaitTime } from '../validate.js';
import { ElectionLock } from './election-lock.js';
import { electionKeys, type ElectionKeys } from '../keys.js';
import { checkLeaderValue, Leadership } from './leadership.js';
import { observeElection, type LeaderInfo } from './observe.js';

/** Options of `election.campaign()`. */
export interface CampaignOptions {
  /** The value published with the leadership (`leader()`, `observe()`). @default '' */
  value?: string;
  /** ms to wait for the leadership; it rejects with LockAcquireTimeoutError then. 0: one attempt. Omitted: no limit. */
  waitTime?: number;
  /** Aborts the campaign (rejecting with the signal's reason). */
  signal?: AbortSignal;
}

/** Options of `election.observe()`. */
export interface ObserveOptions {
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
}

/** A leader election shared by every client: `locks.getElection(name)`. */
export interface RElection {
  /** The election's name. */
  readonly name: string;
  /**
   * Resolves when this caller leads (each call is a candidate of its own). Waits push-based for
   * the leader to step down, or to be gone (a dead leader's lease, `watchdogTimeout`, ends).
   * @throws LockAcquireTimeoutError when `waitTime` ran out; the signal's reason when aborted.
   */
  campaign(options?: CampaignOptions): Promise<Leadership>;
  /** The leader now, from any client: `{ value, epoch }`, or null when nobody leads. */
  leader(): Promise<LeaderInfo | null>;
  /**
   * The current leader (or null), then each change, in order, pushed over pub/sub. Ends when
   * `signal` aborts or the loop breaks; rejects with LockClientClosedError when the client closes.
   */
  observe(options?: ObserveOptions): AsyncIterableIterator<LeaderInfo | null>;
}

const CAMPAIGN_OPTIONS = ['value', 'waitTime', 'signal'];
const OBSERVE_OPTIONS = ['signal'];

/**
 * Leader election on the lock machinery: a campaign is a fenced, watchdog-renewed hold of the
 * election's hash whose epoch is the fencing token; the scripts that change who leads or what it
 * says announce it on the election's channel.
 */
export class Election implements RElection {
  readonly name: string;
  readonly #core: LockCore;
  readonly #keys: ElectionKeys;

  constructor(core: LockCore, name: unknown) {
    this.name = checkLockName(name);
    this.#core = core;
    this.#keys = electionKeys(core.keyPrefix, this.name);
  }

  async campaign(options?: CampaignOptions): Promise<Leadership> {
    const raw = checkOptions(options, CAMPAIGN_OPTIONS, this.name);
    const value = checkLeaderValue(raw.value, this.name);
    const waitTime = checkWaitTime(raw.waitTime, this.name);
    const signal = checkSignal(raw.signal, this.name);
    const lock = new ElectionLock(this.#core, this.#keys, value);
    // A context of its own: every campaign is a candidate of its own, never a re-entry.
    const lease = await runInNewContext(() => lock.acquire({ waitTime, signal }));
    return new Leadership(lock, lease, lease.token ?? 0, value);
  }

  async leader(): Promise<LeaderInfo | null> {
    this.#core.assertOpen();
    await this.#core.ready();
    const { leader } = await this.#core.scripts.election.state(this.#keys);
    return leader && { value: leader.value, epoch: leader.epoch };
  }

  observe(options?: ObserveOptions): AsyncIterableIterator<LeaderInfo | null> {
    const raw = checkOptions(options, OBSERVE_OPTIONS, this.name);
    return observeElection(this.#core, this.#keys, checkSignal(raw.signal, this.name));
  }
}
