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

/** A request of a window: in use until its copies are settled and its caller sends it no more. */
export interface WindowRequest extends CallRequest {
  /** Its caller sends it no more (a call never sent, or a retried one that stopped). */
  close(): void;
}

/** One request's copies on their way and whether its caller may send more; `ended` once neither. */
abstract class RequestUse implements WindowRequest {
  id = '';
  /** Its sequence number on its key. */
  seq = 0;
  #copies = 0;
  /** No copy will be sent after those on their way. */
  #final = true;
  /** In use: given out and not ended yet. */
  inUse = false;

  /** Given out as `id` (number `seq`); `final`: sent once, by a caller that holds no request. */
  start(id: string, seq: number, final: boolean): void {
    this.id = id;
    this.seq = seq;
    this.#copies = 0;
    this.#final = final;
    this.inUse = true;
  }

  sending(): void {
    this.#copies += 1;
  }

  settled(): void {
    this.#copies -= 1;
    this.#end();
  }

  close(): void {
    this.#final = true;
    this.#end();
  }

  #end(): void {
    if (!this.inUse || !this.#final || this.#copies > 0) return;
    this.inUse = false;
    this.ended();
  }

  /** No longer in use: its number is free. */
  protected abstract ended(): void;
}

interface WaitingCall {
  readonly owner: string | undefined;
  readonly held: HeldRequest | undefined;
  readonly start: (request: WindowRequest) => void;
}

/**
 * The calls of one client on one key: their sequence numbers, and the calls waiting for room. It
 * is itself the request of a call made while no other of its calls is in use (nearly every call:
 * one acquire, then one release), so such a call allocates no object; the window stays in the
 * client's map while idle, up to IDLE_WINDOWS of them.
 */
class KeyWindow extends RequestUse {
  /** The next sequence number. */
  next: number;
  /** The oldest sequence number still in use; `next` when none is. */
  low: number;
  /** Numbers above `low` that are no longer in use (answered out of order). */
  over: Set<number> | undefined = undefined;
  waiting: WaitingCall[] | undefined = undefined;

  constructor(
    readonly key: string,
    first: number,
    readonly requests: RequestWindow,
  ) {
    super();
    this.next = first;
    this.low = first;
  }

  /** No call of it is in use and none waits. */
  get idle(): boolean {
    return this.low === this.next && this.waiting === undefined;
  }

  protected ended(): void {
    this.requests.over(this, this.seq);
  }
}

/** A request of a call made while another of its window's calls was in use. */
class SideRequest extends RequestUse {
  constructor(readonly window: KeyWindow) {
    super();
  }

  protected ended(): void {
    this.window.requests.over(this.window, this.seq);
  }
}

/** Idle windows kept for their key's next call; past this many they are dropped all at once. */
const IDLE_WINDOWS = 256;

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
  /** Windows in the map with no call in use. */
  #idle = 0;
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
      window = new KeyWindow(key, this.#last + 1, this);
      this.#windows.set(key, window);
    } else if (window.idle) {
      // As if new: numbered above every number this client gave.
      this.#idle -= 1;
      window.next = window.low = this.#last + 1;
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
    const request = window.inUse ? new SideRequest(window) : window;
    request.start(id, seq, held === undefined || held.done);
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
    if (window.idle && (this.#idle += 1) > IDLE_WINDOWS) this.#dropIdle();
  }

  #dropIdle(): void {
    for (const [key, window] of this.#windows) if (window.idle) this.#windows.delete(key);
    this.#idle = 0;
  }
}
