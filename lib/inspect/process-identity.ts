import { hostname } from 'node:os';
import { identityKey } from '../keys.js';
import type { RedisPort } from '../redis/port.js';
import { settleWithin } from '../settle-within.js';
import type { ProcessIdentity } from './types.js';

/** How long a client's identity outlives its last refresh, ms: a dead process's entry goes within this. */
export const IDENTITY_TTL_MS = 120_000;

/** How often an open client that has held or waited refreshes its identity, ms: one SET per period. */
export const IDENTITY_REFRESH_MS = IDENTITY_TTL_MS / 2;

/** How long close() waits for the identity's DEL, ms: a dead connection must not hold close() up. */
const CLOSE_WAIT_MS = 250;

/** The longest host name kept, characters (DNS allows 253). */
const MAX_HOST_LENGTH = 255;

/**
 * A client's process identity in Redis (`{<prefix>:}:client:<id>` → JSON host, pid, name,
 * startedAt, with a TTL): written at its first hold or wait, never at construction, so a client
 * that never locks writes nothing; refreshed by an unref'd timer while the client is open, so it
 * costs no call on the lock path; deleted by close(). Best effort: a refused or failed write
 * leaves the client unknown to inspections, and locking goes on as before.
 */
export class ClientIdentity {
  readonly #redis: RedisPort;
  readonly #key: string;
  readonly #value: string;
  #timer: ReturnType<typeof setInterval> | undefined;
  #written = false;
  #closed = false;

  constructor(redis: RedisPort, keyPrefix: string, clientId: string, name: string | undefined, startedAt = Date.now()) {
    this.#redis = redis;
    this.#key = identityKey(keyPrefix, clientId);
    const identity: ProcessIdentity = { host: hostname().slice(0, MAX_HOST_LENGTH), pid: process.pid, ...(name === undefined ? {} : { name }), startedAt };
    this.#value = JSON.stringify(identity);
  }

  /** At every hold and wait: the first one writes and starts the refresh timer; later ones cost one check. */
  touch(): void {
    if (this.#timer !== undefined || this.#closed) return;
    // An idle client must never keep the process alive.
    this.#timer = setInterval(() => this.#write(), IDENTITY_REFRESH_MS).unref();
    this.#write();
  }

  /**
   * Stops refreshing and deletes the identity, if it was written; never rejects, and waits at most
   * CLOSE_WAIT_MS (a closed or cut-off connection may never answer; the key's TTL ends it then).
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stop();
    if (!this.#written) return;
    await settleWithin(this.#send(['del', this.#key]), CLOSE_WAIT_MS);
  }

  #write(): void {
    this.#written = true;
    void this.#send(['set', this.#key, this.#value, 'PX', IDENTITY_TTL_MS]).then((ok) => {
      // A closed connection or a refusal (ACL) stops the timer; the next hold or wait tries again.
      if (!ok) this.#stop();
    });
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Sends one command; resolves false when it failed (thrown or rejected). */
  async #send(args: (string | number)[]): Promise<boolean> {
    try {
      await this.#redis.command(args, this.#key);
      return true;
    } catch {
      return false;
    }
  }
}
