import type { LockCore } from '../core.js';
import { LockClientClosedError } from '../errors.js';
import type { NoticeListener } from '../waiting/notice-subscriber.js';
import type { ElectionKeys } from '../keys.js';
import type { ElectionState } from '../scripts/registry.js';

/** Who leads an election, as `leader()` and `observe()` tell it. */
export interface LeaderInfo {
  /** The value the leader published (its campaign's, or its latest `proclaim`). */
  readonly value: string;
  /** The leader's epoch: greater than every earlier leader's of this name. */
  readonly epoch: number;
}

/**
 * A state of an election, in the order of changes: leader (epoch, rev) < vacancy after epoch <
 * any leader of a greater epoch. `rev` counts the leader's proclaims; a vacancy has rev Infinity.
 */
interface Seen {
  readonly epoch: number;
  readonly rev: number;
  readonly info: LeaderInfo | null;
}

/** Re-read at once when a pause in reading is this short, ms; and after a failed read. */
const EXPIRY_MARGIN_MS = 5;
const RETRY_READ_MS = 1_000;

function newer(a: Seen, b: Seen | undefined): boolean {
  return b === undefined || a.epoch > b.epoch || (a.epoch === b.epoch && a.rev > b.rev);
}

/** An announcement (election-announce.lua) as a state; undefined if it is none. */
function parseChange(message: string): Seen | undefined {
  if (message.startsWith('V:')) {
    const epoch = Number(message.slice(2));
    return Number.isSafeInteger(epoch) ? { epoch, rev: Infinity, info: null } : undefined;
  }
  const match = /^L:(\d+):(\d+):/.exec(message);
  if (!match) return undefined;
  const epoch = Number(match[1]);
  return { epoch, rev: Number(match[2]), info: { value: message.slice(match[0].length), epoch } };
}

function stateOf(read: ElectionState): Seen {
  const { leader } = read;
  if (leader) return { epoch: leader.epoch, rev: leader.rev, info: { value: leader.value, epoch: leader.epoch } };
  return { epoch: read.lastEpoch, rev: Infinity, info: null };
}

/** One observer: receives each change this client's watch of the election sees. */
interface Sink {
  push(info: LeaderInfo | null): void;
  fail(error: unknown): void;
}

/**
 * This client's watch of one election, shared by every `observe()` of it: one subscription to
 * the election's channel. Changes are pushed by the scripts that make them; a dead leader's
 * lease ends in silence, so while a leader is known the watch reads the election again when
 * that leader's key would expire (as a waiting campaigner sleeps until the holder's TTL). It
 * reads again too when the subscription came back after a reconnect (announcements may have been
 * missed) and when a leader is announced with no expiry read pending. Every change and read is
 * ordered by (epoch, rev): a stale one (a read overtaken by an announcement) is dropped.
 */
class ElectionWatch implements NoticeListener {
  readonly #core: LockCore;
  readonly #keys: ElectionKeys;
  readonly #channel: string;
  readonly #sinks = new Set<Sink>();
  readonly #onEnd: () => void;
  #latest: Seen | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reading = false;
  #readAgain = false;
  #ended = false;
  readonly #stopOnClose: () => void;

  constructor(core: LockCore, keys: ElectionKeys, onEnd: () => void) {
    this.#core = core;
    this.#keys = keys;
    this.#channel = core.redis.keyPrefix + keys.changes;
    this.#onEnd = onEnd;
    this.#stopOnClose = core.holds.whenClosed(() => this.#end(new LockClientClosedError('the LockClient was closed while observing')));
  }

  /** Subscribes, then reads the current state; rejects when the subscription fails. */
  async start(): Promise<void> {
    await this.#core.ready();
    if (this.#ended) return;
    await this.#core.subscriber.subscribe(this.#channel, this);
    this.#read();
  }

  join(sink: Sink): void {
    this.#sinks.add(sink);
    if (this.#latest) sink.push(this.#latest.info);
  }

  leave(sink: Sink): void {
    this.#sinks.delete(sink);
    if (this.#sinks.size === 0) this.#end(undefined);
  }

  notify(message: string): void {
    const change = parseChange(message);
    if (!change) return;
    const older = this.#latest !== undefined && change.epoch < this.#latest.epoch;
    this.#offer(change);
    // A new leader with no expiry read pending: read once, which arms the read at its expiry. An
    // epoch older than one told already: a late announcement, or Redis lost the election's keys
    // and counts again; a read tells which (see #read).
    if ((change.info && !this.#timer) || older) this.#read();
  }

  resync(): void {
    this.#read();
  }

  /** The subscription failed: every observer's loop rejects with `error`. */
  fail(error: unknown): void {
    this.#end(error);
  }

  #offer(state: Seen): void {
    if (!newer(state, this.#latest)) return;
    const before = this.#latest;
    this.#latest = state;
    // Vacant after vacant (a leader came and went unseen, e.g. while disconnected): no change to tell.
    if (before && before.info === null && state.info === null) return;
    for (const sink of this.#sinks) sink.push(state.info);
  }

  /** Reads the election (one read at a time; a read asked for meanwhile follows it). */
  #read(): void {
    if (this.#ended) return;
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const known = this.#latest;
    this.#core.scripts.election
      .state(this.#keys)
      .then(
        (read) => {
          if (this.#ended) return;
          // Read after epoch `known.epoch` was seen, yet the counter is below it: Redis lost the
          // election's keys (a restart without persistence, a failover to a replica behind). Its
          // epochs begin again: what Redis says now is the current state.
          if (known && read.lastEpoch < known.epoch) this.#latest = undefined;
          this.#offer(stateOf(read));
          if (read.leader) this.#readIn(Math.max(0, read.leader.ttlMs) + EXPIRY_MARGIN_MS);
        },
        (error: unknown) => {
          if (this.#ended) return;
          this.#core.events.emit('error', error);
          this.#readIn(RETRY_READ_MS);
        },
      )
      .finally(() => {
        this.#reading = false;
        if (this.#readAgain) {
          this.#readAgain = false;
          this.#read();
        }
      });
  }

  #readIn(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#read();
    }, ms);
    this.#timer.unref();
  }

  #end(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#timer);
    this.#stopOnClose();
    this.#onEnd();
    if (error === undefined) {
      try {
        this.#core.assertOpen();
        this.#core.subscriber.unsubscribe(this.#channel).catch((e: unknown) => this.#core.events.emit('error', e));
      } catch {
        // The client closed: its subscriber is closed with every channel.
      }
    }
    for (const sink of this.#sinks) sink.fail(error);
    this.#sinks.clear();
  }
}

/** Every client's watches, by election channel. */
const watches = new WeakMap<LockCore, Map<string, ElectionWatch>>();

function watchOf(core: LockCore, keys: ElectionKeys): { watch: ElectionWatch; started: Promise<void> | undefined } {
  let byChannel = watches.get(core);
  if (!byChannel) watches.set(core, (byChannel = new Map<string, ElectionWatch>()));
  const existing = byChannel.get(keys.changes);
  if (existing) return { watch: existing, started: undefined };
  const map = byChannel;
  const watch: ElectionWatch = new ElectionWatch(core, keys, () => {
    if (map.get(keys.changes) === watch) map.delete(keys.changes);
  });
  map.set(keys.changes, watch);
  return { watch, started: watch.start() };
}

/**
 * `election.observe()`: an async iterator of the current leader, then of each change, in order.
 * Changes that arrive faster than the loop takes them are queued, none dropped. It ends when the
 * signal aborts or the loop breaks, and rejects with LockClientClosedError when the client closes.
 */
export function observeElection(core: LockCore, keys: ElectionKeys, signal: AbortSignal | undefined): AsyncIterableIterator<LeaderInfo | null> {
  const queue: (LeaderInfo | null)[] = [];
  let waiting: { resolve: (r: IteratorResult<LeaderInfo | null>) => void; reject: (e: unknown) => void } | undefined;
  let failure: { error: unknown } | undefined;
  let done = false;
  let attached: ElectionWatch | undefined;

  const finish = (): void => {
    if (done) return;
    done = true;
    signal?.removeEventListener('abort', finish);
    attached?.leave(sink);
    waiting?.resolve({ value: undefined, done: true });
    waiting = undefined;
  };
  const sink: Sink = {
    push(info) {
      if (done) return;
      if (waiting) {
        waiting.resolve({ value: info, done: false });
        waiting = undefined;
      } else queue.push(info);
    },
    fail(error) {
      if (done) return;
      if (error === undefined) {
        finish();
        return;
      }
      done = true;
      signal?.removeEventListener('abort', finish);
      if (waiting) waiting.reject(error);
      else failure = { error };
      waiting = undefined;
    },
  };
  const attach = (): void => {
    if (attached || done) return;
    core.assertOpen();
    const { watch, started } = watchOf(core, keys);
    attached = watch;
    watch.join(sink);
    started?.catch((error: unknown) => watch.fail(error));
  };

  if (signal?.aborted) done = true;
  else signal?.addEventListener('abort', finish, { once: true });

  return {
    next(): Promise<IteratorResult<LeaderInfo | null>> {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
      if (failure) {
        const { error } = failure;
        failure = undefined;
        return Promise.reject(error);
      }
      if (done) return Promise.resolve({ value: undefined, done: true });
      try {
        attach();
      } catch (error) {
        done = true;
        return Promise.reject(error);
      }
      // Joining a watch that knows the state already queued it.
      if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
    return(): Promise<IteratorResult<LeaderInfo | null>> {
      finish();
      queue.length = 0;
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
