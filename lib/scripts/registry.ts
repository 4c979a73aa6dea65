import { ElectionScripts } from './election-scripts.js';
import { FairLockScripts } from './fair-scripts.js';
import { IdentityScripts } from './identity-scripts.js';
import { InspectScripts } from './inspect-scripts.js';
import { LeaseMoveScripts } from './lease-move-scripts.js';
import { ExclusiveLockScripts } from './lock-scripts.js';
import { ReadWriteLockScripts } from './read-write-scripts.js';
import { RenewalScripts } from './renewal-scripts.js';
import type { RedisPort } from '../redis/port.js';
import { ScriptRunner } from './script-runner.js';
import { RequestWindow } from './request-window.js';
import { SynchronizerScripts } from './semaphore-scripts.js';

export type { ElectionState } from './election-scripts.js';
export type { RawLockState } from './inspect-scripts.js';
export type { ReadWriteState } from './read-write-scripts.js';

export { ScriptStatus, type HoldsLeft, type NotHeld } from './script-status.js';
export { WaiterMode, type PublishCommand, type RenewScript, type ReplicaAck } from './script-types.js';
export type { CallRequest, HeldRequest, RequestWindow, WindowRequest } from './request-window.js';

/**
 * Every script rlock runs on one connection, by the kind of lock they serve: the one registry of
 * a client (and of the CLI), over one runner. Each method builds its KEYS and ARGV and turns the
 * reply into a typed result.
 */
export class LockScripts {
  readonly lock: ExclusiveLockScripts;
  readonly fair: FairLockScripts;
  readonly readWrite: ReadWriteLockScripts;
  readonly renewal: RenewalScripts;
  readonly synchronizers: SynchronizerScripts;
  /** extend, hand-off and adopt of any kind's hold. */
  readonly leaseMoves: LeaseMoveScripts;
  readonly election: ElectionScripts;
  /** The one read of every key of a lock (`rlock inspect`, the holder and queue queries). */
  readonly inspect: InspectScripts;
  /** The read of clients' process identities (inspections). */
  readonly identities: IdentityScripts;
  /** The request ids of this client's changing calls (request-window.ts). */
  readonly requests: RequestWindow;

  constructor(port: RedisPort, clientId: string) {
    this.requests = new RequestWindow(clientId);
    const runner = new ScriptRunner(port);
    this.lock = new ExclusiveLockScripts(runner);
    this.fair = new FairLockScripts(runner);
    this.readWrite = new ReadWriteLockScripts(runner);
    this.renewal = new RenewalScripts(runner);
    this.synchronizers = new SynchronizerScripts(runner);
    this.leaseMoves = new LeaseMoveScripts(runner);
    this.election = new ElectionScripts(runner);
    this.inspect = new InspectScripts(runner);
    this.identities = new IdentityScripts(runner);
  }
}
