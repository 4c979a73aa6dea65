// How a torture worker's LockClient connects (ClientSetup), as options of each Redis client: the
// client's own connections (connections.ts) and its renewal thread's (renewal-connect.ts, which
// loads only the client it uses) are made alike. No client package is imported here.
import type { ClientSetup } from './events.js';

/** Reconnects quickly; `ownRetries`: a call whose connection dropped fails at once (not resent). */
export function ioredisOptions(setup: Pick<ClientSetup, 'ownRetries'>): { retryStrategy: (times: number) => number; maxRetriesPerRequest: number } {
  return { retryStrategy: (times: number) => Math.min(25 * times, 300), maxRetriesPerRequest: setup.ownRetries ? 0 : 20 };
}

/** The same for node-redis (`disableOfflineQueue`: a call made while disconnected fails at once). */
export function nodeRedisOptions(
  url: string,
  setup: Pick<ClientSetup, 'ownRetries'>,
): { url: string; socket: { reconnectStrategy: (retries: number) => number }; disableOfflineQueue?: boolean } {
  return {
    url,
    socket: { reconnectStrategy: (retries: number) => Math.min(25 * (retries + 1), 300) },
    ...(setup.ownRetries ? { disableOfflineQueue: true } : {}),
  };
}
