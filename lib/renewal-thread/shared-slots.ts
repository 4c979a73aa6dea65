/**
 * The memory the main thread and its renewal thread share (one SharedArrayBuffer): the main
 * thread's heartbeat, and one slot per hold the thread renews. Each side reads the other's writes
 * at once, without the other's event loop: a hold ended just before the main loop blocks is
 * never renewed after, and a main thread resuming from a block reads what the thread did.
 * Times are absolute ms (`performance.timeOrigin + performance.now()`, each thread its own
 * origin), stored as whole microseconds so Atomics can read and write them.
 */

/** A slot's state, written by the side that moves it. */
export const SlotState = {
  /** Unused, or given back to the main thread. */
  Free: 0,
  /** The main thread holds it: renew it. */
  Active: 1,
  /** The main thread ended it (released, lost, capped): never renew it again. */
  Ended: 2,
  /** The thread let it go: the main thread had not beaten for `maxStall`. */
  Stalled: 3,
  /** A renewal found it gone from Redis. */
  Gone: 4,
  /** A renewal found another owner holding it. */
  Taken: 5,
} as const;
export type SlotState = (typeof SlotState)[keyof typeof SlotState];

/** Slots per client: holds beyond them are renewed by the main thread, as without the thread. */
export const SLOT_COUNT = 4_096;

/** Now, in absolute ms comparable across threads. */
export function absoluteNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The views of one shared buffer; both threads build them from the same buffer. */
export class SharedSlots {
  readonly buffer: SharedArrayBuffer;
  /** [0]: the main thread's last heartbeat, µs. */
  readonly #beat: BigInt64Array;
  readonly #state: Int32Array;
  /** Bumped at each assignment: a message about an older use of a slot is ignored. */
  readonly #generation: Int32Array;
  /** When the last confirmed renewal was sent, µs (0: none yet). */
  readonly #renewedAt: BigInt64Array;
  /** When the hold reaches its maxHoldTime, µs (0: no cap): no renewal after. */
  readonly #capAt: BigInt64Array;

  constructor(buffer = new SharedArrayBuffer(8 + SLOT_COUNT * (4 + 4 + 8 + 8))) {
    this.buffer = buffer;
    let at = 0;
    this.#beat = new BigInt64Array(buffer, at, 1);
    at += 8;
    this.#renewedAt = new BigInt64Array(buffer, at, SLOT_COUNT);
    at += 8 * SLOT_COUNT;
    this.#capAt = new BigInt64Array(buffer, at, SLOT_COUNT);
    at += 8 * SLOT_COUNT;
    this.#state = new Int32Array(buffer, at, SLOT_COUNT);
    at += 4 * SLOT_COUNT;
    this.#generation = new Int32Array(buffer, at, SLOT_COUNT);
  }

  beat(at = absoluteNow()): void {
    Atomics.store(this.#beat, 0, toMicros(at));
  }

  lastBeat(): number {
    return fromMicros(Atomics.load(this.#beat, 0));
  }

  state(slot: number): SlotState {
    return Atomics.load(this.#state, slot) as SlotState;
  }

  generation(slot: number): number {
    return Atomics.load(this.#generation, slot);
  }

  /** The main thread gives the slot to a hold: a new generation, Active, nothing renewed yet. */
  assign(slot: number): number {
    const generation = Atomics.add(this.#generation, slot, 1) + 1;
    Atomics.store(this.#renewedAt, slot, 0n);
    Atomics.store(this.#capAt, slot, 0n);
    Atomics.store(this.#state, slot, SlotState.Active);
    return generation;
  }

  /** Moves the slot `from` → `to` if it is still in `from` (generation `generation`); true if it moved. */
  move(slot: number, generation: number, from: SlotState, to: SlotState): boolean {
    if (this.generation(slot) !== generation) return false;
    return Atomics.compareExchange(this.#state, slot, from, to) === from;
  }

  /** The main thread ends the slot whatever the thread did to it. */
  end(slot: number): void {
    Atomics.store(this.#state, slot, SlotState.Ended);
  }

  free(slot: number): void {
    Atomics.store(this.#state, slot, SlotState.Free);
  }

  /** The thread: a renewal sent at `sentAt` was confirmed (kept if later than the last). */
  renewed(slot: number, generation: number, sentAt: number): void {
    if (this.generation(slot) !== generation) return;
    const micros = toMicros(sentAt);
    if (micros > Atomics.load(this.#renewedAt, slot)) Atomics.store(this.#renewedAt, slot, micros);
  }

  renewedAt(slot: number): number {
    return fromMicros(Atomics.load(this.#renewedAt, slot));
  }

  setCap(slot: number, at: number): void {
    Atomics.store(this.#capAt, slot, toMicros(at));
  }

  capAt(slot: number): number {
    const micros = Atomics.load(this.#capAt, slot);
    return micros === 0n ? Infinity : fromMicros(micros);
  }
}

function toMicros(ms: number): bigint {
  return BigInt(Math.round(ms * 1_000));
}

function fromMicros(micros: bigint): number {
  return Number(micros) / 1_000;
}
