import type { LibraryAdapter } from '../adapters/adapter.js';
import type { Machine } from '../machine.js';

/** What the reports say about the run itself. */
export interface RunInfo {
  readonly startedAt: string;
  readonly durationS: number;
  readonly quick: boolean;
  readonly seed: number;
  readonly machine: Machine;
  readonly adapters: readonly LibraryAdapter[];
  readonly chartFile: string;
}
