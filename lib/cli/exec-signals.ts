import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/** The signals `rlock exec` handles from its start, and passes on to the command while it runs. */
export const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'] as const;

/** Before the command runs, these end the wait; SIGUSR1 and SIGUSR2 (the command's) are ignored then. */
const ENDS_WAIT = new Set<NodeJS.Signals>(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']);

/** Why a wait ended: a signal came before the command ran. */
export class WaitEnded extends Error {
  override readonly name = 'WaitEnded';

  constructor(readonly signal: NodeJS.Signals) {
    super(`${signal} before the command ran`);
  }
}

/** The exit status of a process a signal ended: 128 + its number. */
export function signalStatus(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/**
 * What `rlock exec` does with a signal, in each of its phases: while it connects and waits for
 * the lock, SIGINT, SIGTERM, SIGHUP and SIGQUIT end the wait (`ended`) and SIGUSR1/SIGUSR2 are
 * ignored; while the command runs, every one is passed on to it; after it exited, while the lock
 * is released, they are ignored. Handled from the start so that Node's defaults never run: its
 * SIGUSR1 opens the inspector on 127.0.0.1, where any local user could attach. The listeners stay
 * until the process exits: removing the last one resets a signal to the system's default action.
 */
export class ExecSignals {
  readonly #waiting = new AbortController();
  #child: ChildProcess | undefined;
  #commandDone = false;

  constructor() {
    for (const signal of FORWARDED) process.on(signal, this.#onSignal);
  }

  /** Aborted (reason: a WaitEnded) when a signal ended the wait. */
  get ended(): AbortSignal {
    return this.#waiting.signal;
  }

  /** The signal that ended the wait, if one did. */
  get endedBy(): NodeJS.Signals | undefined {
    return this.#waiting.signal.aborted ? (this.#waiting.signal.reason as WaitEnded).signal : undefined;
  }

  /** `work`'s outcome, unless a signal ends the wait first: then a WaitEnded, and what `work` yields later goes to `late`. */
  race<T>(work: Promise<T>, late: (value: T) => void): Promise<T> {
    const { signal } = this.#waiting;
    return new Promise<T>((resolve, reject) => {
      const onEnded = (): void => {
        reject(signal.reason as WaitEnded);
        work.then(late, () => undefined);
      };
      if (signal.aborted) return onEnded();
      signal.addEventListener('abort', onEnded, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener('abort', onEnded);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onEnded);
          reject(error);
        },
      );
    });
  }

  /** The command runs: signals go to it from now on. */
  running(child: ChildProcess): void {
    this.#child = child;
  }

  /** The command exited: signals are ignored while the lock is released. */
  commandDone(): void {
    this.#child = undefined;
    this.#commandDone = true;
  }

  readonly #onSignal = (signal: NodeJS.Signals): void => {
    if (this.#child) {
      this.#child.kill(signal);
      return;
    }
    if (!this.#commandDone && ENDS_WAIT.has(signal) && !this.#waiting.signal.aborted) this.#waiting.abort(new WaitEnded(signal));
  };
}
