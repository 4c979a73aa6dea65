/**
 * Every error rlock raises extends {@link LockError}. Each has a literal `name`, a stable
 * `code`, the lock's name where one is involved, and the underlying `cause` where there is one.
 */

export * from './errors/lock-error.js';
export * from './errors/lock-errors.js';
export * from './errors/redlock-errors.js';
