import { InvalidArgumentError } from '../errors.js';
import { GlidePubSub, type GlidePubSubClient } from './glide-pubsub.js';
import { ConnectionFacts, type Arg, type LuaScript, type PubSubPort, type RedisPort, type ReplicaAck, type ServerNode } from './port.js';
import { Resender } from './resender.js';

/** Where GLIDE sends a `customCommand` on a Cluster. */
export type GlideRoute = 'randomNode' | { type: 'primarySlotKey'; key: string } | { type: 'routeByAddress'; host: string; port: number };

/** GLIDE's `Decoder.String`: replies as strings whatever `defaultDecoder` the application chose. */
const DECODE_STRINGS = 1;

/** The settings a GLIDE client was made with (TS-private `config` in GLIDE 2: the application's own object). */
export interface GlideConfig {
  readonly addresses?: readonly { host: string; port?: number }[];
  readonly databaseId?: number;
  readonly requestTimeout?: number;
  readonly pubsubSubscriptions?: { readonly channelsAndPatterns?: object; readonly callback?: unknown };
  readonly [setting: string]: unknown;
}

/** The members of a GLIDE `GlideClient` or `GlideClusterClient` (2.3+) this adapter uses. */
export interface GlideLike extends GlidePubSubClient {
  customCommand(args: string[], options?: { route?: GlideRoute; decoder?: number }): Promise<unknown>;
  invokeScript(...args: never[]): unknown;
  readonly config?: GlideConfig;
}

/** Whether `value` looks like a GLIDE client (either kind), whichever copy of the package made it. */
export function isGlideLike(value: object): value is GlideLike {
  const conn = value as Partial<GlideLike>;
  return typeof conn.customCommand === 'function' && typeof conn.invokeScript === 'function' && typeof conn.getPubSubMessage === 'function';
}

/** Whether a GLIDE client is a `GlideClusterClient` (it alone has sharded pub/sub). */
export function isGlideCluster(conn: GlideLike): boolean {
  return typeof conn.ssubscribe === 'function';
}

/** How long a slot map read from the Cluster is used before it is read again, ms. */
const SLOT_MAP_MS = 5_000;

/** GLIDE's default `requestTimeout`, ms. */
export const GLIDE_REQUEST_TIMEOUT_MS = 250;

/** The class name of `error` or of one of its ancestors is `name` (GLIDE's error classes, whichever copy). */
function isA(error: unknown, name: string): boolean {
  for (let proto: unknown = error; proto !== null && proto !== undefined; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { constructor?: { name?: string } }).constructor?.name === name) return true;
  }
  return false;
}

/** GLIDE refused a call before sending it: `inflightRequestsLimit` (1000 by default) calls were in flight. */
const TOO_MANY_IN_FLIGHT = /maximum inflight requests/i;

/**
 * Whether a call may be sent again: GLIDE lost its answer, because the connection dropped
 * (ConnectionError) or no answer came within `requestTimeout` (TimeoutError; the call may still
 * run), so Redis may have run it; or GLIDE did not send it, having too many calls in flight.
 */
function resendable(error: unknown): boolean {
  if (isA(error, 'ConnectionError') || isA(error, 'TimeoutError')) return true;
  return isA(error, 'RequestError') && error instanceof Error && TOO_MANY_IN_FLIGHT.test(error.message);
}

/** GLIDE's ClosingError (the application closed its client) as an error that says so. */
function closedSaid(error: unknown): unknown {
  if (!isA(error, 'ClosingError')) return error;
  const detail = error instanceof Error && error.message ? `: ${error.message}` : '';
  return new Error(`the GLIDE client was closed${detail}`, { cause: error });
}

/**
 * Valkey GLIDE (`@valkey/valkey-glide` 2.3+), `GlideClient` or `GlideClusterClient`. GLIDE has no
 * key prefix and no Sentinel. Scripts go by EVAL with their text, through `customCommand`:
 * - not EVALSHA: GLIDE tells nothing of its reconnects, so rlock cannot know which socket has a
 *   script; after a restart an EVALSHA refused (NOSCRIPT) and sent again would run after calls
 *   made behind it, and a RedLock's undo must run after the attempt it undoes.
 * - not GLIDE's `Script`: it runs only on a client of the package copy that made it, holds native
 *   memory until `release()`d, and is sent by SHA as well.
 * GLIDE rejects a call whose connection dropped, and one not answered within `requestTimeout`
 * (250 ms by default), although Redis may have run either: rlock sends it again (the request
 * window answers a resend of a call that ran), behind the first copy on the same connection;
 * and one beyond `inflightRequestsLimit`, unsent: rlock sends it after a pause. A copy whose
 * answer timed out still runs before anything sent after it on its connection, so the request
 * window may forget it once later calls move on (as after a reset). GLIDE cannot put a resend
 * ahead of calls it already holds for a reconnect: a call made in the moment between a drop and
 * its rejection may run before the resend of a call made earlier.
 */
export class GlidePort extends ConnectionFacts implements RedisPort {
  readonly #conn: GlideLike;
  readonly #resender = new Resender({ resendable, backOff: true, toFront: false });
  /** GLIDE's `requestTimeout`: a WAIT must end sooner. */
  readonly replyTimeoutMs: number;

  constructor(conn: GlideLike) {
    const cluster = isGlideCluster(conn);
    const first = conn.config?.addresses?.[0];
    super({
      family: 'glide',
      deployment: cluster ? 'cluster' : 'standalone',
      connection: conn,
      keyPrefix: '',
      shardedPubSub: cluster,
      address: cluster || first === undefined ? undefined : `${first.host}:${first.port ?? 6379}`,
      db: cluster ? 0 : (conn.config?.databaseId ?? 0),
    });
    this.#conn = conn;
    this.replyTimeoutMs = conn.config?.requestTimeout ?? GLIDE_REQUEST_TIMEOUT_MS;
    // The slot map before the first renewal tick, so that tick is batched per node too.
    if (cluster) void this.#loadSlots();
  }

  /** One command, routed on a Cluster (by `key`, else to any node), sent again if its answer was lost. */
  #send(args: readonly Arg[], route: GlideRoute | undefined): Promise<unknown> {
    const strings = args.map(String);
    const options = route === undefined || this.deployment !== 'cluster' ? { decoder: DECODE_STRINGS } : { route, decoder: DECODE_STRINGS };
    return this.#resender.send(() => this.#conn.customCommand(strings, options)).catch((error: unknown) => {
      throw closedSaid(error);
    });
  }

  #routeOf(key: string | undefined): GlideRoute {
    return key === undefined ? 'randomNode' : { type: 'primarySlotKey', key };
  }

  runScript(script: LuaScript, args: readonly Arg[]): Promise<unknown> {
    const count = script.numberOfKeys ?? Number(args[0]);
    const rest = script.numberOfKeys === undefined ? args.slice(1) : args;
    return this.#send(['eval', script.lua, count, ...rest], this.#routeOf(count > 0 ? String(rest[0]) : undefined));
  }

  async runScriptThenWait(script: LuaScript, args: readonly Arg[], ack: ReplicaAck): Promise<[unknown, number]> {
    // Two round trips (GLIDE's batches need its own classes): the WAIT goes to the script's
    // node, on the same connection, after the script's answer.
    const reply = await this.runScript(script, args);
    const key = script.numberOfKeys === undefined ? args[1] : args[0];
    return [reply, await this.waitForReplicas(String(key ?? ''), ack)];
  }

  command(args: readonly Arg[], key?: string): Promise<unknown> {
    // A keyless command on a Cluster goes to one node (GLIDE sends INFO to every node otherwise).
    return this.#send(args, this.#routeOf(key));
  }

  async waitForReplicas(key: string, ack: ReplicaAck): Promise<number> {
    return Number(await this.#send(['wait', ack.replicas, ack.timeoutMs], this.#routeOf(key)));
  }

  async masters(): Promise<ServerNode[]> {
    if (this.deployment !== 'cluster') return [{ address: this.address ?? 'glide', command: (args) => this.#send(args, undefined) }];
    // GLIDE keeps its slot map to itself: the masters as the Cluster tells them.
    const nodes = String(await this.#send(['cluster', 'nodes'], 'randomNode'));
    return nodes
      .split('\n')
      .map((line) => line.split(' '))
      .filter((fields) => fields.length > 2 && fields[2]!.split(',').includes('master') && !/fail|noaddr/.test(fields[2]!))
      .map((fields) => {
        const address = fields[1]!.split('@')[0]!;
        const colon = address.lastIndexOf(':');
        const route: GlideRoute = { type: 'routeByAddress', host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
        return { address, command: (args: readonly Arg[]) => this.#send(args, route) };
      });
  }

  /** Master address by slot, as CLUSTER SLOTS last told (GLIDE keeps its own map to itself). */
  #slots: string[] | undefined;
  #slotsAt = -Infinity;
  #loadingSlots = false;

  slotOwner(slot: number): string | undefined {
    // Read again in the background when older than SLOT_MAP_MS: until then, batches go by slot.
    if (!this.#loadingSlots && performance.now() - this.#slotsAt > SLOT_MAP_MS) void this.#loadSlots();
    return this.#slots?.[slot];
  }

  async #loadSlots(): Promise<void> {
    this.#loadingSlots = true;
    try {
      const ranges = (await this.#send(['cluster', 'slots'], 'randomNode')) as [number, number, [string, number]][];
      const slots = new Array<string>(16_384);
      for (const [start, end, [host, port]] of ranges) slots.fill(`${host}:${port}`, Number(start), Number(end) + 1);
      this.#slots = slots;
      this.#slotsAt = performance.now();
    } catch {
      // Renewals stay batched per slot until a later look succeeds.
    } finally {
      this.#loadingSlots = false;
    }
  }

  /**
   * rlock's own pub/sub client, made like the application's from the settings it was made with
   * (its own message callback, RESP3). GLIDE keeps them in a TS-private `config`.
   * @throws InvalidArgumentError when they cannot be read: the application passes a `subscriber`.
   */
  assertCanOpenPubSub(): void {
    const create = (this.#conn.constructor as { createClient?: unknown }).createClient;
    if (this.#conn.config?.addresses === undefined || typeof create !== 'function') {
      throw new InvalidArgumentError(
        '`redis` is a GLIDE client whose settings rlock cannot read to open its own pub/sub client: pass one as the `subscriber` option ' +
          '(a GLIDE client of the same kind, made without a pubsubSubscriptions callback)',
      );
    }
  }

  openPubSub(sharded: boolean): PubSubPort {
    this.assertCanOpenPubSub();
    const Client = this.#conn.constructor as unknown as { createClient(config: GlideConfig): Promise<GlidePubSubClient> };
    // The application's settings, less what must not be shared or would stop pub/sub: a lazy
    // connection, its client-side cache, its protocol (pub/sub needs RESP3, GLIDE's default).
    const settings = Object.fromEntries(
      Object.entries(this.#conn.config!).filter(([name]) => !['lazyConnect', 'protocol', 'clientSideCache', 'pubsubSubscriptions'].includes(name)),
    );
    return GlidePubSub.owned((callback) => Client.createClient({ ...settings, pubsubSubscriptions: { channelsAndPatterns: {}, callback } }), sharded);
  }
}
