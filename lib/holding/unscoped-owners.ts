/** Empty lists kept for their lock's next call (see UnscopedOwners#emptied). */
const EMPTY_LISTS = 256;

/**
 * Per lock (its lock id), the owners of the holds one client took outside any context, latest
 * last: `unlock()` outside a context releases the latest. A list that empties stays for the lock's
 * next call (a lock taken and released in a loop would make and drop it every time); past
 * EMPTY_LISTS empty ones they are dropped all at once, so lock names used once cost nothing for long.
 */
export class UnscopedOwners {
  readonly #lists = new Map<string, string[]>();
  /** Lists in #lists that are empty. */
  #empty = 0;

  /** Locks with a list, empty ones included (for specs: bounded by the locks in use). */
  get lists(): number {
    return this.#lists.size;
  }

  /** The owner of the latest unscoped hold on the lock. */
  latest(lockId: string): string | undefined {
    return this.#lists.get(lockId)?.at(-1);
  }

  /** Takes the latest owner off the list (an unlock is on its way for it). */
  take(lockId: string): string | undefined {
    const owners = this.#lists.get(lockId);
    const owner = owners?.pop();
    if (owner !== undefined && owners!.length === 0) this.#emptied();
    return owner;
  }

  /** Lists an owner (latest last), or puts it back after its unlock failed. */
  remember(lockId: string, owner: string): void {
    const owners = this.#lists.get(lockId);
    if (!owners) {
      this.#lists.set(lockId, [owner]);
    } else if (!owners.includes(owner)) {
      if (owners.length === 0) this.#empty -= 1;
      owners.push(owner);
    }
  }

  forget(lockId: string, owner: string): void {
    const owners = this.#lists.get(lockId);
    const at = owners?.lastIndexOf(owner) ?? -1;
    if (at === -1) return;
    owners!.splice(at, 1);
    if (owners!.length === 0) this.#emptied();
  }

  #emptied(): void {
    this.#empty += 1;
    if (this.#empty <= EMPTY_LISTS) return;
    for (const [lockId, owners] of this.#lists) if (owners.length === 0) this.#lists.delete(lockId);
    this.#empty = 0;
  }
}
