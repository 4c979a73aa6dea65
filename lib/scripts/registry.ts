import { FairLockScripts } from './fair-scripts.js';
import { LeaseMoveScripts } from './lease-move-scripts.js';
import { ExclusiveLockScripts } from './lock-scripts.js';
import { ReadWriteLockScripts } from './read-write-scripts.js';
import { RenewalScripts } from './renewal-scripts.js';
import type { RedisPort } from '../redis/port.js';
import { ScriptRunner } from './script-runner.js';
import { RequestWindow } from './request-window.js';
import { SynchronizerScripts } from './semaphore-scripts.js';

export type { ReadWriteState } from './read-write-scripts.js';

export { WaiterMode, type PublishCommand, type RenewScript, type ReplicaAck } from './script-types.js';
export type { CallRequest, HeldRequest, RequestWindow, WindowRequest } from './request-window.js';

/** Every script rlock runs on one connection, by the kind of lock they serve. */
export class LockScripts {
  readonly lock: ExclusiveLockScripts;
  readonly fair: FairLockScripts;
  readonly readWrite: ReadWriteLockScripts;
  readonly renewal: RenewalScripts;
  readonly synchronizers: SynchronizerScripts;
  /** extend, hand-off and adopt of any kind's hold. */
  readonly leaseMoves: LeaseMoveScripts;
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
  }
}
