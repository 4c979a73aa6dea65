/**
 * The process a client runs in, as it recorded itself in Redis while it held or waited
 * (`LockClient.inspect()` and the `rlock` command show it).
 */
export interface ProcessIdentity {
  /** The host name (`os.hostname()`). */
  readonly host: string;
  /** The process id (`process.pid`). */
  readonly pid: number;
  /** The `clientName` option the application gave, if any. */
  readonly name?: string;
  /** When the `LockClient` was made, ms since the epoch. */
  readonly startedAt: number;
}

/** One owner's holds of a lock, as {@link RLock.getHolders} reports them. */
export interface LockHolder {
  /** The owner id: `${clientId}:${contextId}` (the client id is the holder's `LockClient.id`). */
  readonly owner: string;
  /** How many times the owner holds the lock (re-entries count); each needs one unlock. */
  readonly holdCount: number;
  /** ms until this hold's lease ends in Redis; -1 when its key has no TTL. */
  readonly ttl: number;
  /** A fenced lock's current fencing token. */
  readonly token?: number;
  /** A read-write lock's side this hold is on. */
  readonly mode?: 'read' | 'write';
  /** In a MultiLock's answer: the member lock this holder holds. */
  readonly lock?: string;
  /**
   * In `LockClient.inspect()`'s answer: the holder's process; null when unknown (its client's
   * identity expired, or another library or an older rlock holds it).
   */
  readonly process?: ProcessIdentity | null;
}

/** One waiting call in a fair lock's queue, as {@link RFairLock.getQueue} reports it. */
export interface QueuedWaiter {
  /** The waiter id: `${clientId}|<n>`, one per waiting call (the client id is its `LockClient.id`). */
  readonly owner: string;
  /** How long it has been queued, ms (server clock); -1 when an older rlock queued it without the time. */
  readonly waitedMs: number;
  /** In `LockClient.inspect()`'s answer: the waiter's process; null when unknown. */
  readonly process?: ProcessIdentity | null;
}

/** A client registered as waiting for a non-fair lock (it is woken, one client per release). */
export interface WaitingClient {
  /** The waiting `LockClient.id`. */
  readonly clientId: string;
  /** ms since it first registered (server clock). */
  readonly waitedMs: number;
  /** In `LockClient.inspect()`'s answer: the waiting client's process; null when unknown. */
  readonly process?: ProcessIdentity | null;
}

/** The kinds of lock `inspectLock` tells apart by their keys. */
export type InspectedKind = 'lock' | 'fenced' | 'fair' | 'read-write';

/** Everything one look at a lock's keys shows (the `rlock inspect` view). */
export interface LockInspection {
  /** The lock's name, as given. */
  readonly name: string;
  /**
   * The kind its keys show (a fair lock by the `fair` mark its acquisition leaves in the hash). A
   * fair lock an older rlock took, with an empty queue, looks like a `lock`.
   */
  readonly kind: InspectedKind;
  /** Each holder (readers each, or the writer), empty when free. */
  readonly holders: readonly LockHolder[];
  /** The lock's TTL in ms: -2 when free, -1 without TTL. */
  readonly ttl: number;
  /** A fair lock's live queue, head first. */
  readonly queue: readonly QueuedWaiter[];
  /** How many calls wait in the fair queue (`queue` may list fewer). */
  readonly queueLength: number;
  /** Clients registered as waiting (a read-write lock: the writers). */
  readonly waitingClients: readonly WaitingClient[];
  /** How many clients are registered as waiting (`waitingClients` may list fewer). */
  readonly waitingClientCount: number;
  /** Clients waiting to read a read-write lock. */
  readonly waitingReaders: readonly WaitingClient[];
  /** How many clients wait to read (`waitingReaders` may list fewer). */
  readonly waitingReaderCount: number;
  /** A fenced lock: the last token handed out (the holder's, while held); null for other kinds. */
  readonly lastToken: number | null;
}
