/**
 * How many calls of one client on one key may be made since the oldest of them still unanswered:
 * a call beyond waits for that one. So a log or record (request-window.lua) keeps fewer than
 * 2 × REQUEST_SPAN entries of one client, however many calls are in flight.
 */
export const REQUEST_SPAN = 64;

/** A changing call's request argument, and its copies on their way to Redis (the runner tells). */
export interface CallRequest {
  /** The script's request argument: `<call id>/<gap>` (request-window.lua). */
  readonly id: string;
  /** A copy of the call goes to Redis. */
  sending(): void;
  /** That copy got its answer, or failed for good: the connection sends it no more. */
  settled(): void;
}

/** Where a call sent again with the same id (a release retried in the background) keeps its request. */
export interface HeldRequest {
  request: WindowRequest | undefined;
  /** Its caller sends it no more: a request made now is used once. */
  readonly done: boolean;
}

/** The calls of one client on one key: their sequence numbers, and the calls waiting for room. */
class KeyWindow {
  /** The next sequence number. */
  next: number;
  /** The oldest sequence number still in use; `next` when none is. */
  low: number;
  /** Numbers above `low` that are no longer in use (answered out of order). */
  over: Set<number> | undefined = undefined;
  waiting: { owner: string | undefined; held: HeldRequest | undefined; start: (request: WindowRequest) => void }[] | undefined = undefined;

  constructor(
    readonly key: string,
    first: number,
  ) {
    this.next = first;
    this.low = first;
  }
}

/** A request of a window: in use until its copies are settled and its caller sends it no more. */
export class WindowRequest implements CallRequest {
  readonly id: string;
  readonly #seq: number;
  readonly #window: KeyWindow;
  readonly #requests: RequestWindow;
  #copies = 0;
  /** No copy will be sent after those on their way. */
  #final: boolean;
  #over = false;

  constructor(id: string, seq: number, window: KeyWindow, requests: RequestWindow, final: boolean) {
    this.id = id;
    this.#seq = seq;
    this.#window = window;
    this.#requests = requests;
    this.#final = final;
  }

  sending(): void {
    this.#copies += 1;
  }

  settled(): void {
    this.#copies -= 1;
    this.#end();
  }

  /** Its caller sends it no more (a call never sent, or a retried one that stopped). */
  close(): void {
    this.#final = true;
    this.#end();
  }

  #end(): void {
    if (this.#over || !this.#final || this.#copies > 0) return;
    this.#over = true;
    this.#requests.over(this.#window, this.#seq);
  }
}

/**
 * One client's request ids for the calls that change a lock, by the key whose call log or record
 * they touch (request-window.lua). A call's id is its sequence number on that key, with the gap
 * down to the oldest call still in use: Redis forgets the entries of calls below it, which the
 * client will never send again. A call stays in use until every copy sent is settled and its
 * caller sends it no more (a release retried in the background keeps its id until it stops).
 * Numbers never repeat on a key: a key's window, dropped once idle, starts again above every
 * number this client gave.
 */
export class RequestWindow {
  readonly #windows = new Map<string, KeyWindow>();
  /** An owner id of this client starts with it; calls for other owners carry it as their tag. */
  readonly #tag: string;
  #last = 0;

  constructor(clientId: string) {
    this.#tag = `${clientId}:`;
  }

  /**
   * `send(request)` with a request for `key`: at once when the window has room, else once it has
   * (in the order calls came). `owner`: whose log or record the call touches (undefined: a record
   * of the client's own, keyed by its tag: forceUnlock, latch). `held`: the request of a call sent
   * again, made at its first send and kept there.
   */
  send<T>(key: string, owner: string | undefined, send: (request: CallRequest) => Promise<T>, held?: HeldRequest): Promise<T> {
    const request = held?.request ?? this.#take(key, owner, held);
    if (request === undefined) return this.#wait(key, owner, held).then((waited) => this.#start(waited, send, held));
    return this.#start(request, send, held);
  }

  #start<T>(request: WindowRequest, send: (request: CallRequest) => Promise<T>, held: HeldRequest | undefined): Promise<T> {
    try {
      return send(request);
    } catch (error) {
      // Never sent (the runner catches what it sends); a held request stays with its caller.
      if (held === undefined) request.close();
      return Promise.reject(error);
    }
  }

  #take(key: string, owner: string | undefined, held: HeldRequest | undefined): WindowRequest | undefined {
    let window = this.#windows.get(key);
    if (window === undefined) {
      window = new KeyWindow(key, this.#last + 1);
      this.#windows.set(key, window);
    } else if (window.waiting !== undefined || window.next - window.low >= REQUEST_SPAN) {
      return undefined;
    }
    return this.#issue(window, owner, held);
  }

  #wait(key: string, owner: string | undefined, held: HeldRequest | undefined): Promise<WindowRequest> {
    const window = this.#windows.get(key)!;
    return new Promise((start) => (window.waiting ??= []).push({ owner, held, start }));
  }

  #issue(window: KeyWindow, owner: string | undefined, held: HeldRequest | undefined): WindowRequest {
    const seq = window.next;
    window.next += 1;
    if (seq > this.#last) this.#last = seq;
    const tag = owner !== undefined && owner.startsWith(this.#tag) ? '' : this.#tag;
    const gap = seq - window.low;
    const id = tag + seq.toString(36) + (gap === 0 ? '/0' : `/${gap.toString(36)}`);
    const request = new WindowRequest(id, seq, window, this, held === undefined || held.done);
    if (held !== undefined) held.request = request;
    return request;
  }

  /** @internal `seq` is no longer in use: the window moves on, and calls waiting for room start. */
  over(window: KeyWindow, seq: number): void {
    if (seq !== window.low) {
      (window.over ??= new Set()).add(seq);
      return;
    }
    window.low += 1;
    while (window.over?.delete(window.low)) window.low += 1;
    const waiting = window.waiting;
    while (waiting !== undefined && waiting.length > 0 && window.next - window.low < REQUEST_SPAN) {
      const next = waiting.shift()!;
      next.start(this.#issue(window, next.owner, next.held));
    }
    if (waiting?.length === 0) window.waiting = undefined;
    if (window.low === window.next && window.waiting === undefined) this.#windows.delete(window.key);
  }
}
