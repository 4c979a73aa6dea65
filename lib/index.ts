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
  LockReplicationError,
  LockUpgradeError,
  type LockErrorOptions,
  type LockLostReason,
} from './errors.js';
export { Lease } from './lease.js';
export { MultiLock } from './locks/multi-lock.js';
export type { LockWaitOptions, RFencedLock, RLock, RReadWriteLock, SignalOptions } from './locks/rlock.js';
export type { LockClientOptions, SyncReplicas } from './options.js';
