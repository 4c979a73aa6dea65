import { InvalidArgumentError } from '../errors.js';

// The semaphore's own option checks (a permit count up to a limit), beside the shared ones in
// validate.ts.

/** A value as an error message shows it. */
export function describe(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' || value == null ? String(value) : typeof value;
}

export function checkCount(value: unknown, option: string, max: number, name?: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(`\`${option}\` must be a whole number from 1 to ${max}, got ${describe(value)}`, { lockName: name });
  }
  return value;
}
