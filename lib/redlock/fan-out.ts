/** How one node answered a fanned-out call; undefined in a result: not awaited. */
export type NodeAnswer<T> =
  | { readonly kind: 'answered'; readonly value: T }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'error'; readonly error: unknown };

/** What a fanned-out call found out. */
export interface FanOutResult<T> {
  /** Per node: its answer, or undefined when the outcome was certain before it answered. */
  readonly answers: readonly (NodeAnswer<T> | undefined)[];
  /** Per node: the call itself. Calls keep running after the result; late answers arrive here. */
  readonly calls: readonly Promise<T>[];
  /** performance.now() when the calls were sent, ms. */
  readonly startedAt: number;
  /** performance.now() when the outcome was known, ms. */
  readonly decidedAt: number;
}

/**
 * Sends `call` to every node at once. A node that has not answered `timeoutMs` after the send
 * counts as timed out, so a dead or frozen node costs at most that. Resolves as soon as
 * `decided(answers)` says the outcome is certain (asked once the calls are sent, then on every
 * answer), or once every node answered or timed out.
 *
 * A timeout is confirmed only after the event loop has polled for I/O once more: when the loop
 * itself was stalled past the timeout, answers already waiting in the sockets still count.
 */
export function fanOut<T>(
  nodes: number,
  call: (node: number) => Promise<T>,
  timeoutMs: number,
  decided: (answers: readonly (NodeAnswer<T> | undefined)[]) => boolean = () => false,
): Promise<FanOutResult<T>> {
  return new Promise((resolve) => {
    const answers: (NodeAnswer<T> | undefined)[] = new Array<NodeAnswer<T> | undefined>(nodes).fill(undefined);
    const timers: NodeJS.Timeout[] = [];
    const startedAt = performance.now();
    let settled = 0;
    let done = false;
    const calls: Promise<T>[] = [];

    const finish = (): void => {
      done = true;
      for (const timer of timers) clearTimeout(timer);
      resolve({ answers: [...answers], calls, startedAt, decidedAt: performance.now() });
    };
    const answer = (node: number, value: NodeAnswer<T>): void => {
      if (done || answers[node] !== undefined) return;
      answers[node] = value;
      settled += 1;
      if (settled === nodes || decided(answers)) finish();
    };

    for (let node = 0; node < nodes; node += 1) {
      let pending: Promise<T>;
      try {
        pending = call(node);
      } catch (error) {
        pending = Promise.reject(error);
      }
      calls.push(pending);
      pending.then(
        (value) => answer(node, { kind: 'answered', value }),
        (error: unknown) => answer(node, { kind: 'error', error }),
      );
      timers.push(setTimeout(() => setImmediate(() => answer(node, { kind: 'timeout' })), timeoutMs));
    }
    if (nodes === 0 || decided(answers)) finish();
  });
}
