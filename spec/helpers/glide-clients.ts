import { Socket } from 'node:net';
import { GlideClient, GlideClusterClient, Logger, StartSocketConnection, type GlideClientConfiguration, type GlideClusterClientConfiguration } from '@valkey/valkey-glide';

/**
 * GLIDE clients for the suite, made at once: GLIDE's `createClient()` is async, and the suite's
 * helpers hand out connections synchronously (as ioredis and node-redis make them). A client is
 * built the way `createClient()` builds it (a socket to GLIDE's core, the client on it, its
 * connection request first); calls made before its connection is up are held on the socket until
 * it is (GLIDE's core takes no call before it connected).
 * Only the suite does this: an application awaits `createClient()`.
 */

// GLIDE logs every error reply and reconnect to stderr: the specs make many on purpose.
Logger.setLoggerConfig('off');
const socketPath = await StartSocketConnection();

/**
 * GLIDE gives up on an answer after `requestTimeout` (250 ms by default) and rlock sends the call
 * again; specs that delay answers on purpose (the fault proxy's latency) expect them to arrive, as
 * on the other clients: 5 s here, as the docs advise. glide.spec.ts checks the default.
 */
const REQUEST_TIMEOUT_MS = 5_000;

/** Reconnect within ~`reconnectMs`: specs restart servers. */
function backoff(reconnectMs: number): { numberOfRetries: number; factor: number; exponentBase: number } {
  return { numberOfRetries: 2, factor: Math.max(1, Math.round(reconnectMs / 4)), exponentBase: 2 };
}

type Internal = { connectToServer(config: object): Promise<void> };

function madeNow<T>(make: (socket: Socket) => T, config: object): { client: T; close: () => Promise<void> } {
  const socket = new Socket();
  socket.on('error', () => undefined);
  socket.connect(socketPath);
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let held: unknown[][] | undefined;
  // The first write is the connection request; the rest wait for its answer.
  socket.write = ((...args: unknown[]) => (held ? (held.push(args), true) : ((held = []), write(...args))));
  const client = make(socket);
  const connected = (client as unknown as Internal).connectToServer(config).catch(() => undefined);
  void connected.then(() => {
    const calls = held ?? [];
    socket.write = write;
    for (const args of calls) write(...args);
  });
  return {
    client,
    close: async () => {
      await connected;
      (client as unknown as { close(): void }).close();
    },
  };
}

/** A GlideClient on `url` (redis://host:port), usable at once. */
export function glideStandalone(url: string, reconnectMs: number, extra: Partial<GlideClientConfiguration> = {}): { client: GlideClient; close: () => Promise<void> } {
  const { hostname, port } = new URL(url);
  const config: GlideClientConfiguration = { addresses: [{ host: hostname, port: Number(port) }], connectionBackoff: backoff(reconnectMs), requestTimeout: REQUEST_TIMEOUT_MS, ...extra };
  const Ctor = GlideClient as unknown as new (socket: Socket, config: object) => GlideClient;
  return madeNow((socket) => new Ctor(socket, config), config);
}

/** A GlideClusterClient on `seeds`, usable at once. */
export function glideCluster(
  seeds: readonly { host: string; port: number }[],
  reconnectMs: number,
  extra: Partial<GlideClusterClientConfiguration> = {},
): { client: GlideClusterClient; close: () => Promise<void> } {
  const config: GlideClusterClientConfiguration = { addresses: seeds.map(({ host, port }) => ({ host, port })), connectionBackoff: backoff(reconnectMs), requestTimeout: REQUEST_TIMEOUT_MS, ...extra };
  const Ctor = GlideClusterClient as unknown as new (socket: Socket, config: object) => GlideClusterClient;
  return madeNow((socket) => new Ctor(socket, config), config);
}
