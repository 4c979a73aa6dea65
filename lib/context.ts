import { AsyncLocalStorage } from 'node:async_hooks';

/** What a thread is to Redisson: the unit that owns a hold and may re-enter it. */
export interface LockContext {
  readonly id: string;
}

const storage = new AsyncLocalStorage<LockContext>();
let lastContextId = 0;

/** A context id unique in this process; owner ids add the client id, so they are unique everywhere. */
export function newContextId(): string {
  lastContextId += 1;
  return lastContextId.toString(36);
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
