import { AsyncLocalStorage } from 'node:async_hooks';

/** What a thread is to Redisson: the unit that owns a hold and may re-enter it. */
export interface LockContext {
  readonly id: string;
}

/** The store of lock contexts and the last context id handed out, shared by every copy. */
interface ContextStore {
  readonly storage: AsyncLocalStorage<LockContext>;
  lastId: number;
}

// One store per process, under a registry symbol: where the ESM and the CJS build of rlock are
// both loaded, a context entered through one copy is the context of the other, and context ids
// (the second half of owner ids) never repeat across copies.
const STORE_KEY = Symbol.for('rlock.contextStore');
const store = ((globalThis as Record<symbol, ContextStore | undefined>)[STORE_KEY] ??= {
  storage: new AsyncLocalStorage<LockContext>(),
  lastId: 0,
});
const storage = store.storage;

/** A context id unique in this process; owner ids add the client id, so they are unique everywhere. */
export function newContextId(): string {
  store.lastId += 1;
  return store.lastId.toString(36);
}

export function currentContext(): LockContext | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` in a fresh context, with `run()` only: entering a store for the rest of the caller
 * (AsyncLocalStorage's other entry point) would leak the context into sibling tasks the caller
 * starts later, letting two tasks "re-enter" one lock.
 */
export function runInNewContext<T>(fn: () => T): T {
  return storage.run({ id: newContextId() }, fn);
}

export function ownerId(clientId: string, contextId: string): string {
  return `${clientId}:${contextId}`;
}
