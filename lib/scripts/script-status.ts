/**
 * The statuses rlock's scripts answer with in place of a value: one table for every script. The
 * Lua returns a small negative number (its header says which); the registry's method turns it
 * into the status here, so no caller reads a number for one.
 */
export const ScriptStatus = {
  /** The owner holds nothing on the lock: its lease ran out, or it never held (Lua: -1). */
  NotHeld: 'not-held',
  /** An owner holding only read holds of a read-write lock asked for its write lock (Lua: -3). */
  UpgradeRefused: 'upgrade-refused',
  /** A hand-off or adopt of one side of a read-write lock whose owner holds the other side (Lua: -3). */
  OtherSideHeld: 'other-side-held',
} as const;
export type NotHeld = typeof ScriptStatus.NotHeld;

/** What a release script answers: the owner's holds left (0: the lock is free), or NotHeld. */
export type HoldsLeft = number | NotHeld;

export function holdsLeft(reply: unknown): HoldsLeft {
  const left = Number(reply);
  return left === -1 ? ScriptStatus.NotHeld : left;
}

/** An acquire script's answer: null when acquired, else ms until the holder's lease ends; or a refused upgrade. */
export function writeAcquired(reply: unknown): number | null | typeof ScriptStatus.UpgradeRefused {
  if (reply === null) return null;
  const ttl = Number(reply);
  return ttl === -3 ? ScriptStatus.UpgradeRefused : ttl;
}

/** A lease move's answer when it is a status (hand-off, adopt). */
export function moveStatus(reply: number): NotHeld | typeof ScriptStatus.OtherSideHeld | number {
  if (reply === -1) return ScriptStatus.NotHeld;
  return reply === -3 ? ScriptStatus.OtherSideHeld : reply;
}
