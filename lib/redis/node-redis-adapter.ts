import calculateSlot from 'cluster-key-slot';
import { isReplyError } from './node-redis-errors.js';
import { NodeRedisPubSub, type NodeRedisSubscribable } from './node-redis-pubsub.js';
import { Resender } from './resender.js';
import { ConnectionFacts, type Arg, type Deployment, type LuaScript, type PubSubPort, type RedisPort, type ReplicaAck, type ServerNode } from './port.js';

/** A node-redis `createClient()`, `createCluster()` or `createSentinel()` object, by what this adapter uses. */
export interface NodeRedisLike extends NodeRedisSubscribable {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  readonly options?: { readonly RESP?: number; readonly keyPrefix?: unknown; readonly database?: number; readonly socket?: { host?: string; port?: number; path?: string } };
  sendCommand(...args: unknown[]): Promise<unknown>;
  multi(...args: unknown[]): { addCommand(...args: unknown[]): unknown; exec(): Promise<unknown[]>; execAsPipeline(): Promise<unknown[]> };
  duplicate(...args: unknown[]): NodeRedisLike;
  /** node-redis 6.1+: the key prefix of a client, cluster or sentinel. */
  readonly _keyPrefix?: unknown;
  /** Client only: counts the sockets it opened (a new one after every reconnect). */
  readonly socketEpoch?: number;
  /** Client only (RESP2 subscriber mode). */
  readonly isPubSubActive?: boolean;
  /** Cluster only. */
  readonly slots?: readonly ({ master: ClusterNodeInfo } | undefined)[];
  readonly masters?: readonly ClusterNodeInfo[];
  readonly nodeByAddress?: unknown;
  /** node-redis 6.1+ Cluster, whose sharded subscriptions follow a moved slot. */
  getNodeClientForKey?(...args: unknown[]): unknown;
  nodeClient?(node: ClusterNodeInfo): NodeRedisLike | Promise<NodeRedisLike>;
  /** Sentinel only. */
  getMasterNode?(): { host: string; port: number } | undefined;
  acquire?(): unknown;
  /** A client pool. */
  execute?(...args: unknown[]): unknown;
}

interface ClusterNodeInfo {
  readonly address: string;
  readonly host?: string;
  readonly port?: number;
  readonly client?: NodeRedisLike;
}

/** Whether `value` looks like a node-redis object: a client, cluster, sentinel (or pool). */
export function isNodeRedisLike(value: object): value is NodeRedisLike {
  const conn = value as Partial<NodeRedisLike>;
  return '_self' in conn && typeof conn.isOpen === 'boolean' && typeof conn.sendCommand === 'function';
}

/** Commands node-redis 6.0 added to every client, cluster, sentinel and pool (Redis 8.8's); no 5.x has them. */
const SINCE_NODE_REDIS_6 = ['clientUnblock', 'increx', 'xNack'];

/**
 * Whether a node-redis object comes from node-redis 6 or later, whichever copy of the package made
 * it: the object does not carry its version, but its command set does. node-redis 5 is refused:
 * after a reconnect it can write queued commands to the dead socket and hand a command another
 * command's reply (6.0 stopped that), which no lock can be made safe against.
 */
export function isNodeRedis6(conn: NodeRedisLike): boolean {
  return SINCE_NODE_REDIS_6.every((command) => typeof (conn as unknown as Record<string, unknown>)[command] === 'function');
}

/** Which of node-redis' objects `conn` is. */
export function nodeRedisDeployment(conn: NodeRedisLike): Deployment | 'pool' {
  if (typeof conn.getMasterNode === 'function' && typeof conn.acquire === 'function') return 'sentinel';
  if (conn.nodeByAddress instanceof Map) return 'cluster';
  if (typeof conn.execute === 'function' && 'totalClients' in conn) return 'pool';
  return 'standalone';
}

const NOSCRIPT = /^NOSCRIPT/;

function isNoScript(error: unknown): boolean {
  return error instanceof Error && NOSCRIPT.test(error.message);
}

/**
 * node-redis (`redis` / `@redis/client` 6): scripts cannot be defined on a client that
 * exists, so this adapter sends EVALSHA where it knows the socket has the script (its text went
 * out on that socket before, ahead of this call) and EVAL with the text otherwise: the first call
 * after every reconnect carries the text, so calls queued across a restart of the server keep
 * their order.
 * A NOSCRIPT (SCRIPT FLUSH, a failover the client did not see) is answered by EVAL. Arguments go
 * as strings; RESP2 and RESP3 replies of rlock's scripts decode alike.
 */
export class NodeRedisPort extends ConnectionFacts implements RedisPort {
  readonly #conn: NodeRedisLike;
  /** Script name → the socket (node address and socket epoch) that has it. */
  readonly #loaded = new Map<string, string>();
  readonly #sha = new Map<string, string>();
  /** Resends calls whose connection dropped before the answer (node-redis rejects them); a Cluster refuses calls while offline. */
  readonly #resender: Resender;

  constructor(conn: NodeRedisLike, deployment: Deployment, sha1: (text: string) => string) {
    // node-redis 6.1+ has a key prefix (ioredis' semantics: keys, not channels).
    const prefix = conn._keyPrefix ?? conn.options?.keyPrefix;
    const socket = conn.options?.socket;
    super({
      family: 'node-redis',
      deployment,
      connection: conn,
      keyPrefix: typeof prefix === 'string' ? prefix : '',
      // node-redis 6.0 drops a sharded subscription whose slot moved: classic pub/sub there.
      shardedPubSub: deployment === 'cluster' && typeof conn.getNodeClientForKey === 'function',
      address:
        deployment !== 'standalone' ? undefined : socket?.path ? `unix:${socket.path}` : `${socket?.host ?? 'localhost'}:${socket?.port ?? 6379}`,
      db: conn.options?.database ?? 0,
    });
    this.#conn = conn;
    this.#sha1 = sha1;
    this.#resender = new Resender({
      resendable: (error) => this.#conn.isOpen && !isReplyError(error),
      backOff: deployment === 'cluster',
      toFront: true,
    });
  }

  readonly #sha1: (text: string) => string;

  /** Sends one command to the node of `key` (any node when there is none); `asap`: ahead of queued commands. */
  #send(args: readonly Arg[], key: string | undefined, asap = false): Promise<unknown> {
    const strings = args.map(String);
    const options = asap ? { asap: true } : undefined;
    switch (this.deployment) {
      case 'cluster':
        return this.#conn.sendCommand(key === undefined ? undefined : this.keyPrefix + key, false, strings, options);
      case 'sentinel':
        return this.#conn.sendCommand(false, strings, options);
      default:
        return this.#conn.sendCommand(strings, options);
    }
  }

  /** Sends a command (`build` gives its arguments at each sending, told whether it is a resend), resent if its answer was lost. */
  #reliably(key: string | undefined, build: (resend: boolean) => readonly Arg[]): Promise<unknown> {
    return this.#resender.send((resend) => this.#send(build(resend), key, resend));
  }

  /** The socket a command on `key` goes out on now, if it is known and ready. */
  #socketOf(key: string | undefined): string | undefined {
    if (this.deployment === 'standalone') return this.#conn.isReady ? String(this.#conn.socketEpoch) : undefined;
    if (this.deployment === 'sentinel') {
      // The master's address: a failover moves the calls to a server that may lack the script.
      const master = this.#conn.isReady ? this.#conn.getMasterNode!() : undefined;
      return master ? `${master.host}:${master.port}` : undefined;
    }
    if (this.deployment === 'cluster' && key !== undefined) {
      const master = this.#conn.slots?.[calculateSlot(this.keyPrefix + key)]?.master;
      const client = master?.client;
      return client?.isReady ? `${master!.address}#${client.socketEpoch}` : undefined;
    }
    return undefined;
  }

  #shaOf(script: LuaScript): string {
    let sha = this.#sha.get(script.name);
    if (sha === undefined) {
      sha = this.#sha1(script.lua);
      this.#sha.set(script.name, sha);
    }
    return sha;
  }

  /** EVALSHA/EVAL's arguments after the script: the key count, the keys (prefixed), the rest. */
  #scriptArgs(script: LuaScript, args: readonly Arg[]): { tail: Arg[]; key: string | undefined } {
    const count = script.numberOfKeys ?? Number(args[0]);
    const rest = script.numberOfKeys === undefined ? args.slice(1) : args;
    const keys = rest.slice(0, count).map((key) => this.keyPrefix + String(key));
    return { tail: [count, ...keys, ...rest.slice(count)], key: count > 0 ? String(rest[0]) : undefined };
  }

  async runScript(script: LuaScript, args: readonly Arg[]): Promise<unknown> {
    const { tail, key } = this.#scriptArgs(script, args);
    // Decided at each sending: a resend after a reconnect carries the text.
    let socket: string | undefined;
    let bySha = false;
    const build = (resend: boolean): readonly Arg[] => {
      socket = this.#socketOf(key);
      // A resend goes ahead of queued calls, maybe ahead of the text it would count on: by text.
      bySha = !resend && socket !== undefined && this.#loaded.get(script.name) === socket;
      // Calls made behind this text on the same socket run after it: by then Redis has the script.
      if (socket !== undefined && !bySha) this.#loaded.set(script.name, socket);
      return bySha ? ['evalsha', this.#shaOf(script), ...tail] : ['eval', script.lua, ...tail];
    };
    try {
      return await this.#reliably(key, build);
    } catch (error) {
      // A text Redis refused may not be cached: the next call sends it again.
      if (!bySha && this.#loaded.get(script.name) === socket) this.#loaded.delete(script.name);
      if (!bySha || !isNoScript(error)) throw error;
      this.#loaded.delete(script.name);
      return this.#reliably(key, () => ['eval', script.lua, ...tail]);
    }
  }

  /**
   * Commands in one round trip on the node of `key`, as a pipeline. A pipeline, not
   * separate calls: node-redis 6 sends a lone WAIT on a Cluster to every master.
   */
  #batch(key: string, commands: readonly (readonly Arg[])[]): Promise<unknown[]> {
    const routed = this.keyPrefix + key;
    const multi = this.deployment === 'cluster' ? this.#conn.multi(routed) : this.#conn.multi();
    for (const command of commands) {
      const args = command.map(String);
      if (this.deployment === 'cluster') multi.addCommand(routed, false, args);
      else if (this.deployment === 'sentinel') multi.addCommand(false, args);
      else multi.addCommand(args);
    }
    return multi.execAsPipeline();
  }

  async runScriptThenWait(script: LuaScript, args: readonly Arg[], ack: ReplicaAck): Promise<[unknown, number]> {
    const { tail, key } = this.#scriptArgs(script, args);
    // By text: a pipeline cannot fall back from NOSCRIPT. Only syncReplicas takes this path.
    const [reply, acks] = await this.#batch(key ?? '', [['eval', script.lua, ...tail], ['wait', ack.replicas, ack.timeoutMs]]);
    return [reply, Number(acks)];
  }

  command(args: readonly Arg[], key?: string): Promise<unknown> {
    // Raw commands get no prefix from node-redis: add it to the command's key.
    const prefixed = key === undefined || !this.keyPrefix ? args : args.map((arg) => (arg === key ? this.keyPrefix + key : arg));
    return this.#reliably(key, () => prefixed);
  }

  async waitForReplicas(key: string, ack: ReplicaAck): Promise<number> {
    // EXISTS pins the pipeline to the key's node on a Cluster, as on ioredis.
    const replies = await this.#batch(key, [['exists', this.keyPrefix + key], ['wait', ack.replicas, ack.timeoutMs]]);
    return Number(replies[1]);
  }

  masters(): Promise<ServerNode[]> {
    if (this.deployment !== 'cluster') {
      const master = this.deployment === 'sentinel' ? this.#conn.getMasterNode!() : undefined;
      const address = master ? `${master.host}:${master.port}` : (this.address ?? 'sentinel');
      return Promise.resolve([{ address, command: (args) => this.#send(args, undefined) }]);
    }
    return Promise.resolve(
      (this.#conn.masters ?? []).map((node) => ({
        address: node.address,
        command: async (args) => (await this.#conn.nodeClient!(node)).sendCommand(args.map(String)),
      })),
    );
  }

  slotOwner(slot: number): string | undefined {
    return this.#conn.slots?.[slot]?.master.address;
  }

  openPubSub(sharded: boolean): PubSubPort {
    // It ends with the application's connection (a cluster says `disconnect`, the others `end`).
    const cluster = this.deployment === 'cluster';
    const app = { conn: this.#conn, end: cluster ? 'disconnect' : 'end', ready: cluster ? 'connect' : 'ready' };
    return new NodeRedisPubSub(this.#conn.duplicate(), true, sharded, app);
  }
}
