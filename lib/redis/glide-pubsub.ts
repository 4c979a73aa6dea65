import type { PubSubHandlers, PubSubPort } from './port.js';

/** A message as GLIDE hands it over (strings, or Buffers under `Decoder.Bytes`). */
export interface GlideMessage {
  readonly channel: unknown;
  readonly message: unknown;
}

type Channels = Iterable<string>;

/** What rlock uses of a GLIDE client to listen: subscribing after creation needs GLIDE 2.3+. */
export interface GlidePubSubClient {
  subscribe?(channels: Channels, timeoutMs: number): Promise<unknown>;
  unsubscribeLazy?(channels?: Channels | null): Promise<unknown>;
  ssubscribe?(channels: Channels, timeoutMs: number): Promise<unknown>;
  sunsubscribeLazy?(channels?: Channels | null): Promise<unknown>;
  getSubscriptions?(): Promise<{ readonly desiredSubscriptions: object; readonly actualSubscriptions: object }>;
  getPubSubMessage(): Promise<GlideMessage>;
  customCommand(args: string[], options?: object): Promise<unknown>;
  close(message?: string): void;
}

/** How often the subscriptions are checked for a reconnect GLIDE did not tell of, ms. */
export const GLIDE_RECHECK_MS = 1_000;

/** Makes rlock's own pub/sub client, with GLIDE's message callback fixed at creation. */
export type GlideSubscriberFactory = (callback: (message: GlideMessage) => void) => Promise<GlidePubSubClient>;

/** Whether every channel of `desired` is in `actual` (GLIDE's sets per channel mode). */
function covers(actual: object, desired: object): boolean {
  const sets = (state: object): Set<unknown>[] => Object.values(state).filter((set): set is Set<unknown> => set instanceof Set);
  const live = new Set(sets(actual).flatMap((set) => [...set].map(String)));
  return sets(desired).every((set) => [...set].every((channel) => live.has(String(channel))));
}

/**
 * The ids of a client's connections (CLIENT ID), as one text: on a Cluster, of its connection to
 * every node, in address order.
 */
async function connectionIds(client: GlidePubSubClient): Promise<string> {
  const cluster = typeof client.ssubscribe === 'function';
  const ids = await client.customCommand(['CLIENT', 'ID'], cluster ? { route: 'allNodes' } : {});
  if (typeof ids !== 'object' || ids === null) return String(ids);
  return JSON.stringify(Object.entries(ids).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * A GLIDE pub/sub client: rlock's own (made from the application client's settings, closed by
 * rlock), or the application's `subscriber` (made without a message callback: rlock reads its
 * message queue; rlock leaves only its channels). GLIDE re-subscribes by itself after a reconnect
 * but says nothing of it, and notices published meanwhile are lost: while channels are
 * subscribed, the client's connection ids (CLIENT ID, on the connections that carry the
 * subscriptions) are read every second, and once they changed, or could not be read, waiters are
 * told to re-ask as soon as the subscriptions are live again. rlock's own client is closed when
 * its last channel is left (after the waiters' linger) and made again at the next subscription:
 * a GLIDE client keeps its process alive, and an idle LockClient must not.
 */
export class GlidePubSub implements PubSubPort {
  readonly #make: GlideSubscriberFactory | undefined;
  readonly #sharded: boolean;
  #client: Promise<GlidePubSubClient> | undefined;
  #handlers: PubSubHandlers | undefined;
  readonly #channels = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking = false;
  /** Subscriptions waiting for the client: it is not closed under them. */
  #joining = 0;
  /** The connection ids last read; `suspect`: a reconnect may have lost notices since. */
  #ids: string | undefined;
  #suspect = false;
  #closed = false;

  private constructor(make: GlideSubscriberFactory | undefined, given: GlidePubSubClient | undefined, sharded: boolean) {
    this.#make = make;
    this.#sharded = sharded;
    if (given !== undefined) this.#client = Promise.resolve(given);
  }

  /** rlock's own client, made by `make` at the first subscription. */
  static owned(make: GlideSubscriberFactory, sharded: boolean): GlidePubSub {
    return new GlidePubSub(make, undefined, sharded);
  }

  /** The application's `subscriber`, made without a message callback. */
  static given(client: GlidePubSubClient, sharded: boolean): GlidePubSub {
    return new GlidePubSub(undefined, client, sharded);
  }

  start(handlers: PubSubHandlers): void {
    this.#handlers = handlers;
    if (this.#make === undefined) void this.#client!.then((client) => this.#read(client));
  }

  readonly #deliver = (message: GlideMessage): void => {
    if (!this.#closed) this.#handlers?.message(String(message.channel), String(message.message));
  };

  /** The application's subscriber: its message queue, one message at a time, until close. */
  async #read(client: GlidePubSubClient): Promise<void> {
    while (!this.#closed) {
      let message: GlideMessage;
      try {
        message = await client.getPubSubMessage();
      } catch (error) {
        if (!this.#closed) this.#handlers?.error(error);
        return;
      }
      this.#deliver(message);
    }
  }

  /** The client, made on first need; made again at the next call if making it failed. */
  #connection(): Promise<GlidePubSubClient> {
    this.#client ??= this.#make!(this.#deliver).catch((error: unknown) => {
      this.#client = undefined;
      this.#handlers?.error(error);
      throw error;
    });
    return this.#client;
  }

  async subscribe(channel: string): Promise<void> {
    if (this.#closed) throw new Error('rlock: the pub/sub connection is closed');
    this.#joining += 1;
    let client: GlidePubSubClient;
    try {
      client = await this.#connection();
    } finally {
      this.#joining -= 1;
    }
    if (typeof (this.#sharded ? client.ssubscribe?.bind(client) : client.subscribe?.bind(client)) !== 'function') {
      throw new Error('rlock: this GLIDE client cannot subscribe after it was made (GLIDE 2.3 or later can)');
    }
    this.#channels.add(channel);
    if (this.#timer === undefined) this.#startRechecks(client);
    // Resolves once Redis confirmed it (0: no time limit of GLIDE's; the waiter has its own).
    await (this.#sharded ? client.ssubscribe!([channel], 0) : client.subscribe!([channel], 0));
  }

  /** The ids are read first, ahead of the SUBSCRIBE: a reconnect from then on shows as a change. */
  #startRechecks(client: GlidePubSubClient): void {
    const timer = setInterval(() => void this.#recheck(), GLIDE_RECHECK_MS);
    timer.unref?.();
    this.#timer = timer;
    void connectionIds(client).then(
      (ids) => {
        if (this.#timer === timer) this.#ids ??= ids;
      },
      () => (this.#suspect = true),
    );
  }

  async unsubscribe(channel: string): Promise<void> {
    this.#channels.delete(channel);
    if (this.#channels.size === 0) this.#stopRechecks();
    const made = this.#client;
    const client = await made?.catch(() => undefined);
    if (client === undefined || this.#closed) return;
    if (this.#make !== undefined && this.#channels.size === 0 && this.#joining === 0 && this.#client === made) {
      // Nothing left to hear: rlock's own client goes (the next subscription makes another).
      this.#client = undefined;
      client.close();
      return;
    }
    await this.#leave(client, [channel]);
  }

  async #leave(client: GlidePubSubClient, channels: readonly string[]): Promise<void> {
    await (this.#sharded ? client.sunsubscribeLazy?.(channels) : client.unsubscribeLazy?.(channels));
  }

  #stopRechecks(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#ids = undefined;
    this.#suspect = false;
  }

  /** One look for a reconnect: the connection ids changed, or cannot be read; then, once live, resync. */
  async #recheck(): Promise<void> {
    const client = await this.#client;
    if (this.#checking || client === undefined || this.#closed) return;
    this.#checking = true;
    try {
      const ids = await connectionIds(client);
      if (this.#ids !== undefined && ids !== this.#ids) this.#suspect = true;
      this.#ids = ids;
      if (!this.#suspect || this.#channels.size === 0) return;
      const state = await client.getSubscriptions?.();
      if (state !== undefined && !covers(state.actualSubscriptions, state.desiredSubscriptions)) return;
      this.#suspect = false;
      if (!this.#closed) this.#handlers?.resubscribed();
    } catch {
      this.#suspect = true;
    } finally {
      this.#checking = false;
    }
  }

  /** Nothing to cut: close() goes on, and closes rlock's own client once it is made. */
  abandon(): void {}

  async close(channels: readonly string[]): Promise<void> {
    this.#closed = true;
    this.#stopRechecks();
    const client = await this.#client?.catch(() => undefined);
    if (client === undefined) return;
    if (this.#make !== undefined) {
      client.close();
    } else if (channels.length > 0) {
      await this.#leave(client, channels).catch(() => undefined);
    }
  }
}
