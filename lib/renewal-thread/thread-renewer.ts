import calculateSlot from 'cluster-key-slot';
import { RENEW_BATCH_SIZE, RENEW_RETRY_MS } from '../options.js';
import type { RenewScript } from '../scripts/script-types.js';
import type { RenewalScripts } from '../scripts/renewal-scripts.js';
import type { FromThread, RenewalThreadData, ToThread } from './protocol.js';
import { absoluteNow, SharedSlots, SlotState } from './shared-slots.js';

/** One hold the thread renews. */
interface Renewed {
  readonly slot: number;
  readonly generation: number;
  readonly script: RenewScript;
  readonly keys: readonly string[];
  readonly holder: string;
}

const RENEWED = 1;
const GONE = 0;

/**
 * The renewal thread's work (worker-main.ts gives it a connection): every third of the lease it
 * renews the Active slots in batched script calls, one per script (and slot, on a Cluster), as
 * the main thread's watchdog does. Before each round it reads the main thread's heartbeat: once
 * that is older than `maxStall`, it lets every hold go (Stalled) and renews none of them again.
 * A slot is read just before its call is made, so a hold the main thread ended is not renewed
 * after; a slot past its maxHoldTime is not renewed either.
 */
export class ThreadRenewer {
  readonly #slots: SharedSlots;
  readonly #data: RenewalThreadData;
  readonly #scripts: RenewalScripts;
  readonly #post: (message: FromThread) => void;
  readonly #holds = new Map<number, Renewed>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(data: RenewalThreadData, scripts: RenewalScripts, post: (message: FromThread) => void) {
    this.#data = data;
    this.#slots = new SharedSlots(data.buffer);
    this.#scripts = scripts;
    this.#post = post;
  }

  /** The first round at once: the main thread may have blocked while the thread was starting. */
  start(): void {
    this.#round();
  }

  receive(message: ToThread): void {
    if (message.type === 'hold') {
      const { slot, generation, script, keys, holder } = message;
      this.#holds.set(slot, { slot, generation, script, keys, holder });
    } else if (message.type === 'end') {
      const held = this.#holds.get(message.slot);
      if (held?.generation === message.generation) this.#holds.delete(message.slot);
      this.#post({ type: 'freed', slot: message.slot, generation: message.generation });
    }
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #schedule(delayMs: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#round(), delayMs);
  }

  #round(): void {
    const now = absoluteNow();
    const stalled = now - this.#slots.lastBeat() > this.#data.maxStallMs;
    const groups = new Map<string, Renewed[]>();
    const changed: number[] = [];
    for (const held of this.#holds.values()) {
      if (stalled) {
        // The main thread is hung (or very slow): its holds go, as a dead process's would.
        if (this.#slots.move(held.slot, held.generation, SlotState.Active, SlotState.Stalled)) changed.push(held.slot);
        continue;
      }
      if (this.#slots.state(held.slot) !== SlotState.Active || this.#slots.generation(held.slot) !== held.generation) continue;
      if (this.#slots.capAt(held.slot) <= now) continue;
      const group = `${held.script}\u0000${this.#data.cluster ? calculateSlot(held.keys[0]!) : ''}`;
      const members = groups.get(group);
      if (members) members.push(held);
      else groups.set(group, [held]);
    }
    if (changed.length > 0) this.#post({ type: 'changed', slots: changed });
    for (const members of groups.values()) {
      for (let i = 0; i < members.length; i += RENEW_BATCH_SIZE) void this.#renew(members.slice(i, i + RENEW_BATCH_SIZE));
    }
    this.#schedule(this.#data.leaseMs / 3);
  }

  async #renew(batch: Renewed[]): Promise<void> {
    const sentAt = absoluteNow();
    let results: number[];
    try {
      const renewal = await this.#scripts.renewMany(
        batch[0]!.script,
        batch.flatMap((held) => held.keys),
        batch.map((held) => held.holder),
        this.#data.leaseMs,
        false,
        this.#data.syncReplicas,
      );
      results = renewal.results;
    } catch (error) {
      if (this.#closed) return;
      const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
      this.#post({ type: 'error', name, message });
      this.#schedule(Math.min(RENEW_RETRY_MS, this.#data.leaseMs / 3));
      return;
    }
    const renewed: number[] = [];
    const changed: number[] = [];
    batch.forEach((held, i) => {
      if (results[i] === RENEWED) {
        this.#slots.renewed(held.slot, held.generation, sentAt);
        renewed.push(held.slot);
      } else if (this.#slots.move(held.slot, held.generation, SlotState.Active, results[i] === GONE ? SlotState.Gone : SlotState.Taken)) {
        changed.push(held.slot);
      }
    });
    if (renewed.length > 0) this.#post({ type: 'renewed', slots: renewed });
    if (changed.length > 0) this.#post({ type: 'changed', slots: changed });
  }
}
