/**
 * Every Redis key and channel of one lock. They all start with `{<prefix>:<name>}`, so the
 * Cluster hash tag is the same for all of them whatever braces the name itself contains
 * (the tag ends at the first `}` after our opening brace, which lies in the shared start),
 * and the tag is never empty because the prefix is not.
 */
export interface LockKeys {
  /** The lock's name as the user gave it. */
  readonly name: string;
  /** Hash: owner id → hold count; its TTL is the lease. */
  readonly lock: string;
  /** Sorted set of client ids waiting for the lock, scored by first registration (server ms). */
  readonly waiters: string;
  /** Wake-up channel of one client: this prefix + the client id. */
  readonly wakePrefix: string;
  /** Fair lock: sorted set of waiting calls (waiter ids) → ticket, in arrival order. */
  readonly queue: string;
  /** Fair lock: sorted set of waiting calls → server time (ms) when they lose their place. */
  readonly queueTimeouts: string;
  /** Fair lock: "your turn" channel of one client: this prefix + the client id. */
  readonly turnPrefix: string;
}

export function lockKeys(keyPrefix: string, name: string): LockKeys {
  const base = `{${keyPrefix}:${name}}`;
  return {
    name,
    lock: base,
    waiters: `${base}:waiters`,
    wakePrefix: `${base}:wake:`,
    queue: `${base}:queue`,
    queueTimeouts: `${base}:timeouts`,
    turnPrefix: `${base}:turn:`,
  };
}
