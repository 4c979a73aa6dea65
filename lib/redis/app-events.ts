/** An application's connection, as far as its events go. */
export interface AppEmitter {
  on(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
}

/** Per connection and event: the one listener rlock put on it, and the callbacks it calls. */
type Watchers = Map<string, { listener: () => void; callbacks: Set<() => void> }>;
const watchers = new WeakMap<object, Watchers>();

/**
 * Calls `callback` each time the application's connection `conn` emits `event`: its end (ioredis
 * and a node-redis client or sentinel say `end`, a node-redis cluster `disconnect`), so rlock ends
 * the connections it made from it, and its `ready`, so rlock's come back. Returns what stops
 * that. One listener per connection and event however many LockClients share the connection (no
 * max-listeners warning), taken off once the last of them stopped (rlock leaves none after close()).
 */
export function onAppEvent(conn: AppEmitter, event: string, callback: () => void): () => void {
  let events = watchers.get(conn);
  if (!events) watchers.set(conn, (events = new Map() as Watchers));
  let watcher = events.get(event);
  if (!watcher) {
    const callbacks = new Set<() => void>();
    const listener = (): void => {
      for (const call of [...callbacks]) call();
    };
    events.set(event, (watcher = { listener, callbacks }));
    conn.on(event, listener);
  }
  const { listener, callbacks } = watcher;
  callbacks.add(callback);
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0) return;
    conn.off(event, listener);
    if (events.get(event)?.listener === listener) events.delete(event);
  };
}
