import { Worker } from 'node:worker_threads';
import { LockLostError, LockRedisError, type LockLostReason } from '../errors.js';
import type { Hold } from '../holding/hold.js';
import type { Holds } from '../holding/holds.js';
import type { RedisPort, ReplicaAck } from '../redis/port.js';
import type { FromThread, RenewalThreadData, ToThread } from './protocol.js';
import { SharedSlots, SLOT_COUNT, SlotState } from './shared-slots.js';
import { renewalWorkerScript } from './worker-script.js';

/** How often the main thread beats, ms: the thread counts a stall from the last beat. */
export const BEAT_MS = 250;

export interface RenewalThreadConfig {
  /** The module's URL (href) whose default export connects the thread's client. */
  readonly connect: string;
  readonly maxStallMs: number;
  readonly leaseMs: number;
  /** The main connection: the thread's must have its key prefix, database and deployment. */
  readonly redis: RedisPort;
  readonly syncReplicas: ReplicaAck | undefined;
  readonly holds: Holds;
  readonly listener: {
    renewed(hold: Hold): void;
    error(error: unknown): void;
    /** The thread is gone: the main thread's watchdog renews every hold again, now. */
    fallBack(): void;
  };
}

/**
 * The client's renewal thread for `settings` (none without): it renews the holds of `holds` from
 * now on, and when it is gone `watchdog` renews them again at once.
 */
export function startRenewalThread(
  settings: { readonly connect: string; readonly maxStallMs: number } | undefined,
  parts: Omit<RenewalThreadConfig, 'connect' | 'maxStallMs' | 'listener'> & {
    readonly watchdog: { renewNow(): void };
    readonly listener: Omit<RenewalThreadConfig['listener'], 'fallBack'>;
  },
): RenewalThread | undefined {
  if (settings === undefined) return undefined;
  const { watchdog, listener, ...rest } = parts;
  const thread = new RenewalThread({ ...settings, ...rest, listener: { ...listener, fallBack: () => watchdog.renewNow() } });
  parts.holds.useRenewer(thread);
  return thread;
}

/** A hold the thread renews: its slot, and the last renewal the main thread applied. */
interface Delegated {
  readonly slot: number;
  readonly generation: number;
  appliedAt: number;
}

const LOST: Partial<Record<SlotState, LockLostReason>> = {
  [SlotState.Gone]: 'deleted',
  [SlotState.Taken]: 'taken',
  [SlotState.Stalled]: 'stalled',
};

/**
 * `renewalThread`: a worker_threads Worker that renews this client's watchdog-mode holds, so a
 * hold outlives a blocked main event loop (worker-main.ts, thread-renewer.ts). The main thread
 * hands a hold over at its acquisition (a slot in shared memory, made Active before the message
 * that names its keys) and ends it synchronously at its last release; it beats a heartbeat every
 * BEAT_MS. Before its holder's clock judges a hold, and whenever the main loop looks (a message
 * of the thread's, a call on the hold), it reads what the thread did: renewals move the clock; a hold
 * the thread let go or found gone is lost. Until the thread is connected, and after it failed or
 * died, the main thread's watchdog renews.
 */
export class RenewalThread {
  readonly #config: RenewalThreadConfig;
  readonly #slots = new SharedSlots();
  readonly #worker: Worker;
  readonly #delegated = new Map<Hold, Delegated>();
  readonly #bySlot = new Map<number, Hold>();
  /** Slots free to give out (a slot comes back once the thread forgot it). */
  readonly #free: number[] = Array.from({ length: SLOT_COUNT }, (_, i) => SLOT_COUNT - 1 - i);
  readonly #beat: ReturnType<typeof setInterval>;
  #state: 'starting' | 'ready' | 'down' | 'closed' = 'starting';
  #closed: Promise<void> | undefined;

  constructor(config: RenewalThreadConfig) {
    this.#config = config;
    // First: a missing program is an InvalidArgumentError from the constructor, before any timer.
    const script = renewalWorkerScript();
    const { redis, leaseMs, maxStallMs, syncReplicas, connect } = config;
    const data: RenewalThreadData = {
      buffer: this.#slots.buffer,
      connect,
      leaseMs,
      maxStallMs,
      keyPrefix: redis.keyPrefix,
      db: redis.db,
      cluster: redis.deployment === 'cluster',
      syncReplicas,
    };
    this.#slots.beat();
    // A beat only: what the thread did reaches the holds by its messages, by the holder's clock,
    // and by any call on a hold (Holds.get), so a beat costs nothing per hold.
    this.#beat = setInterval(() => this.#slots.beat(), BEAT_MS);
    this.#beat.unref();
    this.#worker = new Worker(script, { workerData: data, stdout: false, stderr: false });
    this.#worker.on('message', (message: FromThread) => this.#receive(message));
    this.#worker.on('error', (error) => this.#down(`the renewal thread failed: ${error.message}`, error));
    this.#worker.on('exit', (code) => this.#down(`the renewal thread exited (code ${code})`));
    // An idle thread never keeps the process alive (after the listeners: a 'message' listener refs it again).
    this.#worker.unref();
  }

  /** Whether the thread renews `hold` now (the main thread's watchdog leaves it alone). */
  renews(hold: Hold): boolean {
    return this.#state === 'ready' && this.#delegated.has(hold);
  }

  /** A watchdog-mode hold is held: hand it to the thread (while a slot is free). */
  track(hold: Hold): void {
    if (this.#state === 'down' || this.#state === 'closed' || this.#delegated.has(hold)) return;
    // A RedLock member with capped renewals stays with the main thread, which counts them.
    if (hold.renewalsLeft !== undefined) return;
    const slot = this.#free.pop();
    if (slot === undefined) return;
    const generation = this.#slots.assign(slot);
    this.#delegated.set(hold, { slot, generation, appliedAt: 0 });
    this.#bySlot.set(slot, hold);
    const { script, keys, holder } = hold.target;
    this.#post({ type: 'hold', slot, generation, script, keys, holder });
  }

  /** The hold is no longer to be renewed (its last release is sent, it ended, it was capped). */
  untrack(hold: Hold): void {
    const delegated = this.#delegated.get(hold);
    if (!delegated) return;
    // First, synchronously: the thread reads the slot before each renewal.
    this.#slots.end(delegated.slot);
    this.#delegated.delete(hold);
    this.#bySlot.delete(delegated.slot);
    this.#post({ type: 'end', slot: delegated.slot, generation: delegated.generation });
  }

  /** The hold's maxHoldTime deadline (performance.now() ms): the thread renews it no later. */
  capped(hold: Hold, at: number): void {
    const delegated = this.#delegated.get(hold);
    if (delegated) this.#slots.setCap(delegated.slot, performance.timeOrigin + at);
  }

  /** Applies what the thread did to every hold it renews. */
  syncAll(): void {
    for (const hold of [...this.#delegated.keys()]) this.sync(hold);
  }

  /** Applies what the thread did to `hold`: a renewal moves its clock; a let-go or lost hold is lost. */
  sync(hold: Hold): void {
    const delegated = this.#delegated.get(hold);
    if (!delegated) return;
    const { holds, leaseMs, listener } = this.#config;
    const renewedAt = this.#slots.renewedAt(delegated.slot);
    if (renewedAt > delegated.appliedAt && holds.isCurrent(hold)) {
      delegated.appliedAt = renewedAt;
      holds.renewed(hold, renewedAt - performance.timeOrigin, leaseMs);
      if (!hold.quiet) listener.renewed(hold);
    }
    const reason = LOST[this.#slots.state(delegated.slot)];
    if (reason === undefined) return;
    this.untrack(hold);
    if (!holds.isCurrent(hold) || hold.releasing !== 0 || !hold.held) return;
    const name = hold.target.name;
    const why = reason === 'stalled' ? `let go: the event loop was blocked for more than maxStall (${this.#config.maxStallMs} ms)` : `lost (${reason})`;
    const error = new LockLostError(`${hold.object} "${name}" was ${why}`, reason, { lockName: name });
    if (reason === 'stalled') hold.letGo?.(hold.count);
    holds.lose(hold, reason, error, reason === 'stalled' && hold.letGo !== undefined);
  }

  /** Ends the thread and its connection (at most `waitMs` for it to quit its connection). */
  close(waitMs = 1_000): Promise<void> {
    this.#closed ??= (async () => {
      const wasUp = this.#state === 'starting' || this.#state === 'ready';
      this.#state = 'closed';
      clearInterval(this.#beat);
      if (!wasUp) return;
      const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
      this.#worker.postMessage({ type: 'close' } satisfies ToThread);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
      await Promise.race([exited, late]);
      clearTimeout(timer);
      await this.#worker.terminate();
    })();
    return this.#closed;
  }

  #post(message: ToThread): void {
    this.#worker.postMessage(message);
  }

  #receive(message: FromThread): void {
    switch (message.type) {
      case 'ready':
        if (this.#state === 'starting') this.#state = 'ready';
        return;
      case 'failed':
        this.#down(`the renewal thread could not connect: ${message.message}`);
        return;
      case 'renewed':
      case 'changed':
        for (const slot of message.slots) {
          const hold = this.#bySlot.get(slot);
          if (hold) this.sync(hold);
        }
        return;
      case 'error':
        this.#config.listener.error(new LockRedisError(`renewal thread: ${message.name}: ${message.message}`, 'renew'));
        return;
      case 'freed':
        if (this.#slots.generation(message.slot) === message.generation && this.#slots.state(message.slot) === SlotState.Ended) {
          this.#slots.free(message.slot);
          this.#free.push(message.slot);
        }
        return;
      case 'closed':
        return;
    }
  }

  /** The thread failed or died: the main thread renews everything again, and says so. */
  #down(why: string, cause?: unknown): void {
    if (this.#state === 'down' || this.#state === 'closed') return;
    this.#state = 'down';
    // What the thread confirmed last still counts.
    this.syncAll();
    this.#delegated.clear();
    this.#bySlot.clear();
    void this.#worker.terminate();
    this.#config.listener.error(new LockRedisError(`${why}; the main thread renews this client's holds from now on`, 'renew', { cause }));
    this.#config.listener.fallBack();
  }
}
