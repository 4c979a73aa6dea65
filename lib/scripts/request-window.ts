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
  /** Its one request, from its first send on (also while that send waits for room); set by the window. */
  request: WindowRequest | undefined;
  /** Its caller sends it no more: a request made now is used once. */
  readonly done: boolean;
}

/**
 * Where a request is in its life (REQUEST_TRANSITIONS):
 * - `waiting`: made while its window had no room; it has no number yet.
 * - `issued`: numbered; copies of it may be on their way, and its caller may send more.
 * - `ended`: closed by its caller and every copy settled: its number is free.
 * - `abandoned`: closed while it still waited for room: never numbered, never sent.
 */
export type RequestState = 'waiting' | 'issued' | 'ended' | 'abandoned';

/** The moves a request may make; anything else is a bug in rlock. */
export const REQUEST_TRANSITIONS: Readonly<Record<RequestState, readonly RequestState[]>> = {
  waiting: ['issued', 'abandoned'],
  issued: ['ended'],
  ended: [],
  abandoned: [],
};

/** A request of a window: in use until its copies are settled and its caller sends it no more. */
export interface WindowRequest extends CallRequest {
  readonly state: RequestState;
  /**
   * Its caller sends it no more (a call never sent, or a retried one that stopped). Closing
   * twice is a no-op: the request is its caller's alone and never given to another call.
   */
  close(): void;
}

/** Sending a request its caller closed: an internal error, never the user's. */
export class ClosedRequestError extends Error {
  constructor(state: RequestState) {
    super(`rlock internal error: a request that is ${state} was sent`);
    this.name = 'ClosedRequestError';
  }
}

/**
 * One call's request: one object per call, made by the window for that call alone, never reused.
 * Its owner (the call, or the PendingRelease that retries it) closes it; its number is freed once
 * that happened and every copy sent is settled, exactly once.
 */
class Request implements WindowRequest {
  id = '';
  /** Its sequence number on its key (0 until issued). */
  seq = 0;
  #state: RequestState = 'waiting';
  #copies = 0;
  /** Its caller sends it no more. */
  #closed: boolean;
  /** Sends of a waiting request wait here for its number (made only when one waits). */
  #issued: { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(
    readonly window: KeyWindow,
    /** Sent once, by a caller that keeps no request: closed from the start. */
    once: boolean,
  ) {
    this.#closed = once;
  }

  get state(): RequestState {
    return this.#state;
  }

  /** Resolves once numbered; rejects once abandoned. */
  whenIssued(): Promise<void> {
    if (this.#state === 'issued') return Promise.resolve();
    if (this.#state !== 'waiting') return Promise.reject(new ClosedRequestError(this.#state));
    if (this.#issued === undefined) {
      let resolve!: () => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<void>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      this.#issued = { promise, resolve, reject };
    }
    return this.#issued.promise;
  }

  /** @internal Numbered `seq` with the request argument `id` (the window calls it). */
  issue(id: string, seq: number): void {
    this.#move('issued');
    this.id = id;
    this.seq = seq;
    this.#issued?.resolve();
  }

  sending(): void {
    if (this.#state !== 'issued') throw new ClosedRequestError(this.#state);
    this.#copies += 1;
  }

  settled(): void {
    this.#copies -= 1;
    this.#end();
  }

  close(): void {
    if (this.#closed) {
      // A call sent once closes when its copy settles; one never sent ends here.
      this.#end();
      return;
    }
    this.#closed = true;
    if (this.#state === 'waiting') {
      this.#move('abandoned');
      this.window.requests.abandoned(this.window, this);
      this.#issued?.reject(new ClosedRequestError('abandoned'));
      return;
    }
    this.#end();
  }

  #end(): void {
    if (this.#state !== 'issued' || !this.#closed || this.#copies > 0) return;
    this.#move('ended');
    this.window.requests.over(this.window, this.seq);
  }

  #move(to: RequestState): void {
    if (!REQUEST_TRANSITIONS[this.#state].includes(to)) throw new Error(`rlock internal error: a request cannot go from ${this.#state} to ${to}`);
    this.#state = to;
  }
}

interface WaitingCall {
  readonly owner: string | undefined;
  readonly request: Request;
}

/** The calls of one client on one key: their sequence numbers, and the calls waiting for room. */
class KeyWindow {
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
    this.next = first;
    this.low = first;
  }

  /** No call of it is in use and none waits. */
  get idle(): boolean {
    return this.low === this.next && this.waiting === undefined;
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
   * of the client's own, keyed by its tag: forceUnlock, latch). `held`: where a call sent again
   * keeps its one request, made at its first send (also while that send waits for room).
   */
  send<T>(key: string, owner: string | undefined, send: (request: CallRequest) => Promise<T>, held?: HeldRequest): Promise<T> {
    let request = held?.request as Request | undefined;
    if (request === undefined) {
      request = this.#make(key, owner, held === undefined || held.done);
      if (held !== undefined) held.request = request;
    }
    if (request.state === 'issued') return this.#start(request, send, held);
    const waited = request;
    return request.whenIssued().then(() => this.#start(waited, send, held));
  }

  #start<T>(request: Request, send: (request: CallRequest) => Promise<T>, held: HeldRequest | undefined): Promise<T> {
    try {
      return send(request);
    } catch (error) {
      // Never sent (the runner catches what it sends); a held request stays with its caller.
      if (held === undefined) request.close();
      return Promise.reject(error);
    }
  }

  #make(key: string, owner: string | undefined, once: boolean): Request {
    let window = this.#windows.get(key);
    if (window === undefined) {
      window = new KeyWindow(key, this.#last + 1, this);
      this.#windows.set(key, window);
    } else if (window.idle) {
      // As if new: numbered above every number this client gave.
      this.#idle -= 1;
      window.next = window.low = this.#last + 1;
    }
    const request = new Request(window, once);
    if (window.waiting !== undefined || window.next - window.low >= REQUEST_SPAN) (window.waiting ??= []).push({ owner, request });
    else this.#issue(window, owner, request);
    return request;
  }

  #issue(window: KeyWindow, owner: string | undefined, request: Request): void {
    const seq = window.next;
    window.next += 1;
    if (seq > this.#last) this.#last = seq;
    const tag = owner !== undefined && owner.startsWith(this.#tag) ? '' : this.#tag;
    const gap = seq - window.low;
    request.issue(tag + seq.toString(36) + (gap === 0 ? '/0' : `/${gap.toString(36)}`), seq);
  }

  /** @internal `seq` is no longer in use: the window moves on, and calls waiting for room start. */
  over(window: KeyWindow, seq: number): void {
    if (seq !== window.low) {
      (window.over ??= new Set()).add(seq);
      return;
    }
    window.low += 1;
    while (window.over?.delete(window.low)) window.low += 1;
    this.#startWaiting(window);
  }

  /** @internal `request`, still waiting for room, is closed: it leaves the queue unnumbered. */
  abandoned(window: KeyWindow, request: Request): void {
    const waiting = window.waiting;
    const at = waiting?.findIndex((call) => call.request === request) ?? -1;
    if (at >= 0) waiting!.splice(at, 1);
    this.#startWaiting(window);
  }

  #startWaiting(window: KeyWindow): void {
    const waiting = window.waiting;
    while (waiting !== undefined && waiting.length > 0 && window.next - window.low < REQUEST_SPAN) {
      const next = waiting.shift()!;
      this.#issue(window, next.owner, next.request);
    }
    if (waiting?.length === 0) window.waiting = undefined;
    if (window.idle && (this.#idle += 1) > IDLE_WINDOWS) this.#dropIdle();
  }

  #dropIdle(): void {
    for (const [key, window] of this.#windows) if (window.idle) this.#windows.delete(key);
    this.#idle = 0;
  }
}
