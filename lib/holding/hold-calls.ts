import { currentContext, ownerId, type LockContext } from '../context.js';
import { LockError, LockHandedOffError } from '../errors.js';

// A hand-off gives the owner id to another process: from then on that process's calls for the
// owner are the adopter's. A call of the same owner on the same lock that Redis ran after the
// hand-off would act on the adopted hold from here: a re-entry would leave a live Lease here (and
// raise the adopter's count), a release would take a hold count from the adopter, an extension
// would stretch its lease. So the hand-off and those calls exclude each other, both ways. The
// key of a lock is its main Redis key: both sides of a read-write lock are one lock here.

/** One owner's calls under way on one lock. */
interface CallsOut {
  /** Acquisitions (re-entries included), releases and extensions sent and not yet settled. */
  calls: number;
  handingOff: boolean;
}

/** The context `owner` (of client `clientId`) belongs to, when it is the current one: the hold remembers it for its hand-off. */
export function contextOfOwner(clientId: string, owner: string): LockContext | undefined {
  const context = currentContext();
  return context && ownerId(clientId, context.id) === owner ? context : undefined;
}

/**
 * The calls under way of each owner on each lock of one client, and its hand-offs, which exclude
 * them: a hand-off is refused while any other call of the owner on the lock is out (it waits for
 * nothing, so it cannot be held up by a long wait), and a call is refused while a hand-off is out
 * or after it (before anything is sent, so nothing needs undoing in Redis).
 */
export class HoldCalls {
  readonly #out = new Map<string, CallsOut>();
  /** Per lock context, the keys of the locks whose hold it handed off through this client (gone with the context). */
  readonly #handedOff = new WeakMap<LockContext, Set<string>>();
  /** Until the first hand-off, acquisitions skip the look-up. */
  #anyHandedOff = false;

  /** `context` handed its hold of `lockKey` off: it may not take that lock again through this client. */
  markHandedOff(context: LockContext | undefined, lockKey: string): void {
    if (!context) return;
    const locks = this.#handedOff.get(context) ?? new Set<string>();
    locks.add(lockKey);
    this.#handedOff.set(context, locks);
    this.#anyHandedOff = true;
  }

  /** Whether `context` handed its hold of `lockKey` off through this client: the owner id is the adopter's since. */
  handedOff(context: LockContext, lockKey: string): boolean {
    return this.#anyHandedOff && this.#handedOff.get(context)?.has(lockKey) === true;
  }

  /**
   * Throws when the current context handed its hold of `lockKey` off: an acquisition would re-enter
   * the adopted hold. (A release or an extension needs the hold's record, which the hand-off ended.)
   */
  assertNotHandedOff(lockKey: string, name: string): void {
    if (!this.#anyHandedOff) return;
    const context = currentContext();
    if (context && this.handedOff(context, lockKey)) {
      throw new LockHandedOffError(
        `this lock context handed its hold of "${name}" off to another process; take the lock again in a new context (locks.runInContext)`,
        { lockName: name },
      );
    }
  }

  /** An acquisition (or re-entry) of `owner` on `lockKey` starts: as `enter`, and refused after this context's hand-off. */
  enterAcquisition(lockKey: string, owner: string, name: string): string {
    this.assertNotHandedOff(lockKey, name);
    return this.enter(lockKey, owner, name);
  }

  /**
   * A call of `owner` on `lockKey` starts; hand the returned key to `leave` once it settled.
   * @throws LockHandedOffError when its hold is being handed off.
   */
  enter(lockKey: string, owner: string, name: string): string {
    const key = `${lockKey}\u0000${owner}`;
    const out = this.#out.get(key);
    if (!out) {
      this.#out.set(key, { calls: 1, handingOff: false });
    } else if (out.handingOff) {
      throw new LockHandedOffError(`the hold of "${name}" is being handed off to another process: this call of its owner is refused`, { lockName: name });
    } else {
      out.calls += 1;
    }
    return key;
  }

  leave(key: string): void {
    const out = this.#out.get(key);
    if (!out) return;
    out.calls -= 1;
    if (out.calls <= 0 && !out.handingOff) this.#out.delete(key);
  }

  /**
   * The hold of `owner` on `lockKey` starts being handed off; hand the returned key to
   * `leaveHandOff` once it settled. `what` names the hold in the error.
   * @throws LockError while another call of the owner on the lock is under way.
   */
  enterHandOff(lockKey: string, owner: string, what: string, name: string): string {
    const key = `${lockKey}\u0000${owner}`;
    if (this.#out.has(key)) {
      throw new LockError(
        `${what} has another call of its owner under way (an acquisition, release, extension or hand-off): it can be handed off once that call settled`,
        { lockName: name },
      );
    }
    this.#out.set(key, { calls: 0, handingOff: true });
    return key;
  }

  leaveHandOff(key: string): void {
    this.#out.delete(key);
  }
}
