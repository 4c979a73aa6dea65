import type { LockCore } from '../core.js';
import { LockReplicationError } from '../errors.js';

/**
 * `syncReplicas`: after an acquisition, WAIT for the replicas' acks on the lock's node. Too few
 * → `rollBack()` (release the hold just taken) and throw LockReplicationError; a failed WAIT →
 * `abandon()` (release in the background) and rethrow.
 */
export async function confirmReplicas(
  core: LockCore,
  lockName: string,
  lockKey: string,
  rollBack: () => Promise<unknown>,
  abandon: () => void,
): Promise<void> {
  const ack = core.syncReplicas;
  if (!ack) return;
  let acks: number;
  try {
    acks = await core.scripts.lock.waitForReplicas(lockKey, lockName, ack);
  } catch (error) {
    abandon();
    throw error;
  }
  if (acks >= ack.replicas) return;
  await rollBack();
  throw new LockReplicationError(
    `lock "${lockName}" was acquired but confirmed by ${acks} of ${ack.replicas} replicas within ` +
      `${ack.timeoutMs} ms, so it was released again`,
    acks,
    ack.replicas,
    { lockName },
  );
}
