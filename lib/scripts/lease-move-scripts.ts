import type { RenewTarget } from './script-types.js';
import type { ObjectKind } from '../errors.js';
import { holdRecordKey } from '../keys.js';
import { moveStatus, type NotHeld, type ScriptStatus } from './script-status.js';
import adoptHold from './adopt-hold-3.lua';
import extendHold from './extend-hold-3.lua';
import handOffHold from './hand-off-hold-3.lua';
import type { ScriptRunner } from './script-runner.js';
import type { CallRequest } from './request-window.js';

/** How the lease scripts name a hold's kind (held-lease.lua). */
export type MoveKind = 'lock' | 'read' | 'write' | 'permit';

/** What the hand-off and adopt scripts report of a hold. */
export interface HeldLease {
  /** The holder's hold count. */
  readonly count: number;
  /** ms left of its lease, by the server's clock. */
  readonly leftMs: number;
  /** A fenced lock's token. */
  readonly token: number | undefined;
}


/** The script kind and keys of a hold, from how the watchdog renews it. */
export function moveKindOf(target: RenewTarget): MoveKind {
  if (target.script === 'lock') return 'lock';
  if (target.script === 'permit') return 'permit';
  return target.holder.startsWith('r:') ? 'read' : 'write';
}

/** The hold's main key, readers key (or the main key again) and one of its records, all in one slot. */
function keysOf(target: RenewTarget, move: 'x' | 'h'): string[] {
  const main = target.keys[0]!;
  return [main, target.keys[1] ?? main, holdRecordKey(main, move, target.holder)];
}

function objectKind(target: RenewTarget): ObjectKind {
  return target.script === 'permit' ? 'semaphore' : 'lock';
}

/** A hand-off's or adopt's answer: the hold, or NotHeld (the hold or the claim is gone), OtherSideHeld, an unknown number. */
export type MoveReply = HeldLease | NotHeld | typeof ScriptStatus.OtherSideHeld | number;

function heldLease(reply: unknown): MoveReply {
  if (!Array.isArray(reply)) return moveStatus(Number(reply));
  const token = reply[2] === '' || reply[2] == null ? undefined : Number(reply[2]);
  return { count: Number(reply[0]), leftMs: Number(reply[1]), token };
}

/** The scripts that extend a hold, hand it off and adopt it (any lock kind, or a permit). */
export class LeaseMoveScripts {
  readonly #runner: ScriptRunner;

  constructor(runner: ScriptRunner) {
    this.#runner = runner;
  }

  /** True when the hold's lease now ends no earlier than `ms` from the server's now; false when it is not held. */
  async extend(target: RenewTarget, ms: number, request: CallRequest): Promise<boolean> {
    const args = [...keysOf(target, 'x'), moveKindOf(target), target.holder, ms, request.id];
    return Number(await this.#runner.run(extendHold, 'extend', target.name, args, objectKind(target), request)) === 1;
  }

  /** Opens the hold for adoption by `handleId`, kept exactly `keepMs` from now (0: a fixed lease, as it is). */
  async handOff(target: RenewTarget, keepMs: number, handleId: string): Promise<MoveReply> {
    const args = [...keysOf(target, 'h'), moveKindOf(target), target.holder, keepMs, handleId];
    return heldLease(await this.#runner.run(handOffHold, 'handOff', target.name, args, objectKind(target)));
  }

  /** Takes the claim `handleId` opened; renews the hold to `renewMs` (0: a fixed lease, kept). */
  async adopt(target: RenewTarget, renewMs: number, handleId: string, request: CallRequest): Promise<MoveReply> {
    const args = [...keysOf(target, 'h'), moveKindOf(target), target.holder, renewMs, handleId, request.id];
    return heldLease(await this.#runner.run(adoptHold, 'adopt', target.name, args, objectKind(target), request));
  }
}
