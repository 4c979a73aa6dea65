import type { LockScripts, ReplicaAck } from '../scripts/registry.js';

/** What confirming an acquisition on the replicas needs of a client (LockCore has it). */
export interface ReplicaDesk {
  readonly syncReplicas: ReplicaAck | undefined;
  readonly scripts: { readonly lock: Pick<LockScripts['lock'], 'waitForReplicas'> };
}
import { LockReplicationError, type ObjectKind } from '../errors.js';

/**
 * `syncReplicas`: after an acquisition, WAIT for the replicas' acks on the lock's node. Too few
 * → `rollBack()` (release the hold just taken) and throw LockReplicationError; a failed WAIT →
 * `abandon()` (release in the background) and rethrow. `kind` names the object in messages.
 */
export async function confirmReplicas(
  core: ReplicaDesk,
  lockName: string,
  lockKey: string,
  rollBack: () => Promise<unknown>,
  abandon: () => void,
  kind: ObjectKind = 'lock',
): Promise<void> {
  const ack = core.syncReplicas;
  if (!ack) return;
  let acks: number;
  try {
    acks = await core.scripts.lock.waitForReplicas(lockKey, lockName, ack, kind);
  } catch (error) {
    abandon();
    throw error;
  }
  if (acks >= ack.replicas) return;
  await rollBack();
  throw new LockReplicationError(
    `an acquisition of ${kind} "${lockName}" was confirmed by ${acks} of ${ack.replicas} replicas within ` +
      `${ack.timeoutMs} ms, so it was given back`,
    acks,
    ack.replicas,
    { lockName },
  );
}
