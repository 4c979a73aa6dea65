import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { createClient } from 'redis';

/**
 * GLIDE's `requestTimeout` in the bench: above any answer the scenarios can wait for (its 250 ms
 * default would turn a queue of hundreds of calls into timeouts and resends).
 */
const GLIDE_REQUEST_TIMEOUT_MS = 5_000;

/** A node-redis client (RESP2) to `url`, not yet connected. */
function nodeRedisClient(url: string) {
  return createClient({ url, RESP: 2 });
}

/** A node-redis client as the bench uses it. */
export type NodeRedisClient = ReturnType<typeof nodeRedisClient>;

/**
 * The connections one library uses in one scenario: each opened ready (so nothing waits in
 * ioredis' offline queue and is sent twice) and wrapped to count every command it sends.
 */
export class Connections {
  readonly #url: string;
  readonly #open: Redis[] = [];
  readonly #openNodeRedis: NodeRedisClient[] = [];
  readonly #openGlide: GlideClient[] = [];
  readonly #sent = new Map<string, number>();

  constructor(url: string) {
    this.#url = url;
  }

  /** A new connection, connected and counted. */
  async open(): Promise<Redis> {
    const redis = new Redis(this.#url, { lazyConnect: true });
    redis.on('error', () => undefined);
    await redis.connect();
    const send = redis.sendCommand.bind(redis);
    // Every command ioredis writes goes through sendCommand: plain calls, defineCommand's
    // EVALSHA and its EVAL fallback, pipelines, SUBSCRIBE.
    redis.sendCommand = (command, stream) => {
      this.#sent.set(command.name, (this.#sent.get(command.name) ?? 0) + 1);
      return send(command, stream);
    };
    this.#open.push(redis);
    return redis;
  }

  /** A new node-redis client (RESP2), connected and counted. */
  async openNodeRedis(): Promise<NodeRedisClient> {
    const client = nodeRedisClient(this.#url);
    client.on('error', () => undefined);
    await client.connect();
    const send = client.sendCommand.bind(client);
    // rlock sends every command and script through sendCommand (pub/sub goes around it).
    client.sendCommand = ((args: readonly string[], options?: object) => {
      const name = String(args[0]).toLowerCase();
      this.#sent.set(name, (this.#sent.get(name) ?? 0) + 1);
      return send(args, options);
    });
    this.#openNodeRedis.push(client);
    return client;
  }

  /** A new Valkey GLIDE client, connected and counted. */
  async openGlide(): Promise<GlideClient> {
    const { hostname, port } = new URL(this.#url);
    const client = await GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], requestTimeout: GLIDE_REQUEST_TIMEOUT_MS });
    const send = client.customCommand.bind(client);
    // rlock sends every command and script through customCommand (pub/sub goes around it).
    client.customCommand = (args, options) => {
      const name = String(args[0]).toLowerCase();
      this.#sent.set(name, (this.#sent.get(name) ?? 0) + 1);
      return send(args, options);
    };
    this.#openGlide.push(client);
    return client;
  }

  /** Commands sent so far, by lower-case name. */
  sent(): Map<string, number> {
    return new Map(this.#sent);
  }

  /** Disconnects every connection opened here. */
  close(): void {
    for (const redis of this.#open.splice(0)) redis.disconnect();
    for (const client of this.#openNodeRedis.splice(0)) client.destroy();
    for (const client of this.#openGlide.splice(0)) client.close();
  }
}

/** `after − before` per command name, zero entries left out. */
export function sentBetween(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, count] of after) {
    const diff = count - (before.get(name) ?? 0);
    if (diff > 0) delta.set(name, diff);
  }
  return delta;
}
