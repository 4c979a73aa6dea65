export { LockClient } from './client.js';
export type { GlideConnection, IoRedisConnection, NodeRedisConnection, RedisConnection } from './redis/connection.js';
export type { LockAcquiredInfo, LockClientEvents, LockEventInfo, LockLostInfo, LockReleasedInfo, LockWarningInfo } from './events.js';
export {
  diagnosticsChannels,
  type AcquireEndMessage,
  type AcquireOutcome,
  type AcquireStartMessage,
  type LockMessage,
  type LostMessage,
  type ReleaseMessage,
  type RenewMessage,
} from './telemetry/channels.js';
export type { HoldEndMessage, HoldStartMessage, RenewFailureMessage } from './telemetry/hold-channels.js';
export { tracingChannels, type AcquireTraceContext, type ReleaseTraceContext } from './telemetry/tracing.js';
export {
  InvalidArgumentError,
  isLockError,
  LockAcquireTimeoutError,
  LockClientClosedError,
  LockError,
  LockHandedOffError,
  LockLostError,
  LockNotHeldError,
  LockRedisError,
  LockReplicationError,
  LockUpgradeError,
  RedLockQuorumError,
  type LockErrorCode,
  type LockErrorOptions,
  type LockLostReason,
  type LockOperation,
  type RedLockNodeFailure,
  type RedLockOperation,
  type RedLockRoundInfo,
} from './errors.js';
export { Lease } from './lease/lease.js';
export type { LeaseHandle, LeaseHandleKind } from './lease/lease-handle.js';
export type { HandOffOptions } from './lease/lease-moves.js';
export { Leadership } from './leadership/leadership.js';
export type { CampaignOptions, ObserveOptions, RElection } from './leadership/election.js';
export type { LeaderInfo } from './leadership/observe.js';
export type { RunExclusiveOptions, RunExclusiveResult } from './leadership/run-exclusive.js';
export { MultiLock } from './locks/multi-lock.js';
export { RedLock } from './redlock/red-lock.js';
export type { InspectedKind, LockHolder, LockInspection, ProcessIdentity, QueuedWaiter, WaitingClient } from './inspect/types.js';
export type { FencedLease, LockWaitOptions, RFairLock, RFencedLock, RLock, RReadWriteLock, SignalOptions } from './locks/lock-interfaces.js';
export type { LockClientOptions, RedLockOptions, RenewalThreadOptions, SyncReplicas } from './options.js';
export { Permit } from './synchronizers/permit.js';
export type { RCountDownLatch, LatchWaitOptions } from './synchronizers/count-down-latch.js';
export type { PermitOptions, RSemaphore, SemaphoreOptions } from './synchronizers/semaphore.js';
