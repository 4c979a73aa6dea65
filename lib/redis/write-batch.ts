/** The part of a connection's socket a write batch uses (a `net.Socket` or `tls.TLSSocket`). */
export interface CorkableSocket {
  readonly writable: boolean;
  cork(): void;
  uncork(): void;
}

/**
 * Writes of one tick go to the socket as one: the socket is corked at the first call of a tick
 * and uncorked once the tick's promise jobs have run (process.nextTick runs after them). ioredis
 * writes every command at once, one system call each; the calls many tasks make when a batch of
 * replies resolves them then cost one system call together (docs/performance.md). Order is
 * kept: corking only delays the socket's flush, and every cork is undone within the tick, also
 * when the connection is replaced meanwhile (the corked socket is the one uncorked).
 */
export class WriteBatch {
  readonly #socketOf: () => CorkableSocket | undefined;
  #corked: CorkableSocket | undefined;

  /** `socketOf`: the connection's current socket, undefined while it has none. */
  constructor(socketOf: () => CorkableSocket | undefined) {
    this.#socketOf = socketOf;
  }

  /** Called before a command is written: the writes of this tick are flushed together. */
  join(): void {
    if (this.#corked !== undefined) return;
    const socket = this.#socketOf();
    if (socket === undefined || !socket.writable) return;
    socket.cork();
    this.#corked = socket;
    process.nextTick(this.#flush);
  }

  readonly #flush = (): void => {
    const socket = this.#corked;
    this.#corked = undefined;
    socket?.uncork();
  };
}
