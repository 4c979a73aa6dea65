import type { LockLostInfo } from './events.js';

/**
 * The process warning for the first `lost` or `error` event of a client that nobody listened to;
 * `warned` holds the events already reported (once per client and event).
 */
export function warnUnheard(warned: Set<string>, event: string, payload: unknown): void {
  if ((event !== 'lost' && event !== 'error') || warned.has(event)) return;
  warned.add(event);
  const what =
    event === 'error'
      ? payload instanceof Error ? payload.message : String(payload)
      : `lock "${(payload as LockLostInfo).name}" (${(payload as LockLostInfo).reason})`;
  process.emitWarning(
    `a LockClient emitted '${event}' with no listener: ${what}. Listen with locks.on('${event}', …) to handle these; ` +
      `this warning is shown once per client and event.`,
    { type: 'RLockWarning', code: event === 'error' ? 'RLOCK_UNHEARD_ERROR' : 'RLOCK_UNHEARD_LOST' },
  );
}
