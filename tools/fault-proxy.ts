import { once } from 'node:events';
import { createServer, Socket } from 'node:net';
import { RespCounter } from './resp-counter.js';

/**
 * A TCP proxy in front of one redis-server on 127.0.0.1 that injects faults: latency, silence
 * (a blackhole that holds or drops bytes, sockets left open), swallowed replies followed by a
 * reset (so ioredis resends a call Redis already ran), and resets of every connection.
 */
export interface FaultProxy {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Client connections open now. */
  readonly connections: number;
  /** True while in blackhole mode. */
  readonly blackholed: boolean;
  /** Delays each chunk by `up` ms (client → Redis) and `down` ms (Redis → client), order kept. Omitted: 0. */
  latency(delays: { up?: number; down?: number }): void;
  /** From now on, every byte both ways on every connection (also new ones) is held, or discarded with `drop`. */
  blackhole(options?: { drop?: boolean }): void;
  /** Delivers what was held and passes bytes through again. */
  heal(): void;
  /**
   * The next `n` commands a client sends reach Redis, but their replies are discarded; after the
   * n-th the client's socket is reset, so ioredis reconnects and resends them. `thenBlackhole`:
   * enter blackhole mode at that reset. Applies to the first connection that sends a command
   * (or open connection number `connection`, counted from 0 in accept order). Commands a client
   * or rlock sends on its own (isHousekeeping: health checks, handshakes, the eviction-policy
   * check at a client's first call, a LockClient's process identity) are neither counted nor swallowed: whenever they go, the
   * swallow catches the calls under test.
   */
  swallowReplies(n: number, options?: { thenBlackhole?: boolean; connection?: number }): void;
  /** Resets every client socket and closes its upstream socket. */
  resetAll(): void;
  /** Ends the swallows under way at once (their connections reset, as the n-th reply would) and drops an armed one. */
  endSwallows(): void;
  close(): Promise<void>;
}

/** One direction of one connection: chunks (and actions such as a reset) in order, each due at a time. */
class Pipe {
  readonly #items: { due: number; data?: Buffer; action?: () => void }[] = [];
  #timer: NodeJS.Timeout | undefined;

  readonly #to: Socket;
  readonly #holding: () => boolean;

  constructor(to: Socket, holding: () => boolean) {
    this.#to = to;
    this.#holding = holding;
  }

  push(delayMs: number, item: { data?: Buffer; action?: () => void }): void {
    this.#items.push({ due: performance.now() + delayMs, ...item });
    this.pump();
  }

  /** Forwards every due item unless the proxy holds; waits for the next one otherwise. */
  pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#items.length > 0 && !this.#holding()) {
      const head = this.#items[0]!;
      const wait = head.due - performance.now();
      if (wait > 0) {
        this.#timer = setTimeout(() => this.pump(), wait);
        return;
      }
      this.#items.shift();
      if (head.action) head.action();
      else if (!this.#to.destroyed) this.#to.write(head.data!);
    }
  }

  /** Forgets held chunks (a dropping blackhole); actions stay. */
  dropData(): void {
    this.#items.splice(0, this.#items.length, ...this.#items.filter((item) => item.action));
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#items.length = 0;
  }
}

/** Commands never swallowed (see swallowReplies), by name in lower case. */
const HOUSEKEEPING = new Set(['ping', 'echo', 'hello', 'auth', 'select', 'client', 'info', 'config', 'cluster', 'command']);

/**
 * Whether a command is housekeeping: one of HOUSEKEEPING, or a LockClient writing or deleting its
 * process identity (`…:client:<id>`), which it sends on its own after its first hold, at a time
 * that depends on the client family.
 */
const isHousekeeping = (head: string, key: string): boolean => {
  const name = head.toLowerCase();
  return HOUSEKEEPING.has(name) || ((name === 'set' || name === 'del') && key.includes(':client:'));
};

interface Swallow {
  /** How many commands are still to be caught. */
  left: number;
  /** The caught commands whose replies have not come yet, by index (replies come in order). */
  readonly replies: Set<number>;
  /**
   * The first caught command's index: from its reply on, nothing reaches the client until the
   * reset, as on a real connection, where a reply is never lost alone (a housekeeping command
   * sent later must not have its reply taken for the lost one's).
   */
  first: number | undefined;
  readonly thenBlackhole: boolean;
}

interface Connection {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly up: Pipe;
  readonly down: Pipe;
  readonly commands: RespCounter;
  readonly replies: RespCounter;
  sent: number;
  answered: number;
  swallow: Swallow | undefined;
}

export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const open = new Set<Connection>();
  let delays = { up: 0, down: 0 };
  let mode: 'pass' | 'hold' | 'drop' = 'pass';
  let armed: { n: number; thenBlackhole: boolean; connection: Connection | undefined } | undefined;
  const holding = (): boolean => mode !== 'pass';

  const kill = (conn: Connection): void => {
    open.delete(conn);
    conn.up.clear();
    conn.down.clear();
    if (!conn.client.destroyed) conn.client.resetAndDestroy();
    conn.upstream.destroy();
  };

  const enterBlackhole = (drop: boolean): void => {
    mode = drop ? 'drop' : 'hold';
    if (!drop) return;
    for (const conn of open) {
      conn.up.dropData();
      conn.down.dropData();
    }
  };

  const fromClient = (conn: Connection, chunk: Buffer): void => {
    for (const { head, key } of conn.commands.feedValues(chunk)) {
      const index = conn.sent;
      conn.sent += 1;
      if (isHousekeeping(head, key)) continue;
      // Replies to the commands sent before still pass.
      if (armed && (armed.connection === undefined || armed.connection === conn)) {
        conn.swallow = { left: armed.n, replies: new Set(), first: undefined, thenBlackhole: armed.thenBlackhole };
        armed = undefined;
      }
      if (conn.swallow && conn.swallow.left > 0) {
        conn.swallow.left -= 1;
        conn.swallow.replies.add(index);
        conn.swallow.first ??= index;
      }
    }
    if (mode !== 'drop') conn.up.push(delays.up, { data: chunk });
  };

  const fromRedis = (conn: Connection, chunk: Buffer): void => {
    if (!open.has(conn)) return;
    const swallowed = (reply: number): boolean => conn.swallow?.first !== undefined && reply >= conn.swallow.first;
    let start = 0;
    for (const { end, push } of conn.replies.feedValues(chunk)) {
      if (push) {
        // A pub/sub message (RESP3): no command's reply, so never counted; lost with the replies after a swallowed one.
        const lost = conn.swallow?.first !== undefined && conn.answered > conn.swallow.first;
        if (mode !== 'drop' && !lost) {
          conn.down.push(delays.down, { data: chunk.subarray(start, end) });
        }
        start = end;
        continue;
      }
      const reply = conn.answered;
      conn.answered += 1;
      if (!swallowed(reply)) {
        if (mode !== 'drop') conn.down.push(delays.down, { data: chunk.subarray(start, end) });
      } else {
        const swallow = conn.swallow!;
        swallow.replies.delete(reply);
        if (swallow.left === 0 && swallow.replies.size === 0) {
          conn.swallow = undefined;
          // In order after the replies before it: the client sees those, then the reset.
          conn.down.push(delays.down, {
            action: () => {
              if (swallow.thenBlackhole) enterBlackhole(false);
              kill(conn);
            },
          });
          conn.upstream.pause();
          return;
        }
      }
      start = end;
    }
    // The start of a reply still incomplete: it goes (or is discarded) with its reply.
    if (start < chunk.length && !swallowed(conn.answered) && mode !== 'drop') {
      conn.down.push(delays.down, { data: chunk.subarray(start) });
    }
  };

  const server = createServer((client) => {
    const upstream = new Socket();
    const conn: Connection = {
      client,
      upstream,
      up: new Pipe(upstream, holding),
      down: new Pipe(client, holding),
      commands: new RespCounter({ inline: true }),
      replies: new RespCounter(),
      sent: 0,
      answered: 0,
      swallow: undefined,
    };
    open.add(conn);
    client.on('data', (chunk: Buffer) => fromClient(conn, chunk));
    upstream.on('data', (chunk: Buffer) => fromRedis(conn, chunk));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('close', () => kill(conn));
    // Redis closed (QUIT, shutdown): the client learns it after the replies before it.
    upstream.on('close', () => {
      if (open.has(conn)) conn.down.push(delays.down, { action: () => kill(conn) });
    });
    upstream.connect(targetPort, '127.0.0.1');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fault proxy: no port');
  const { port } = address;

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get connections() {
      return open.size;
    },
    get blackholed() {
      return mode !== 'pass';
    },
    latency: ({ up = 0, down = 0 }) => {
      delays = { up, down };
    },
    blackhole: ({ drop = false } = {}) => enterBlackhole(drop),
    heal: () => {
      mode = 'pass';
      for (const conn of open) {
        conn.up.pump();
        conn.down.pump();
      }
    },
    swallowReplies: (n, { thenBlackhole = false, connection } = {}) => {
      if (!Number.isInteger(n) || n < 1) throw new Error('swallowReplies: n must be a positive integer');
      const chosen = connection === undefined ? undefined : [...open][connection];
      if (connection !== undefined && !chosen) throw new Error(`swallowReplies: no open connection ${connection}`);
      armed = { n, thenBlackhole, connection: chosen };
    },
    resetAll: () => {
      for (const conn of [...open]) kill(conn);
    },
    endSwallows: () => {
      armed = undefined;
      for (const conn of [...open]) {
        const swallow = conn.swallow;
        if (swallow?.first === undefined) continue;
        conn.swallow = undefined;
        conn.down.push(delays.down, { action: () => kill(conn) });
      }
    },
    close: async () => {
      for (const conn of [...open]) kill(conn);
      armed = undefined;
      server.close();
      await once(server, 'close');
    },
  };
}
