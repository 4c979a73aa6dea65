/** The kind in a lock id (`${kind}\0${key}`, as holds are recorded); a permit is a hold on a `semaphore`. */
export function kindOfLockId(lockId: string): string {
  const kind = lockId.slice(0, lockId.indexOf('\u0000'));
  return kind === 'permit' ? 'semaphore' : kind;
}
