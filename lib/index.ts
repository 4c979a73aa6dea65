export { LockClient } from './client.js';
export type { LockClientEvents, LockEventInfo, LockLostInfo } from './core.js';
export {
  InvalidArgumentError,
  isLockError,
  LockAcquireTimeoutError,
  LockClientClosedError,
  LockError,
  LockLostError,
  LockNotHeldError,
  RedLockQuorumError,
  type LockErrorOptions,
  type LockLostReason,
  type RedLockNodeFailure,
  type RedLockOperation,
  type RedLockRoundInfo,
} from './errors.js';
export { Lease } from './lease.js';
export { RedLock } from './locks/red-lock.js';
export type { LockWaitOptions, RLock, SignalOptions } from './locks/rlock.js';
export type { LockClientOptions, RedLockOptions } from './options.js';
