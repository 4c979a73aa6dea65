import type { Redis } from 'ioredis';
import { adapterLabel, type LibraryAdapter, type Locker, type Release } from '../adapters/adapter.js';
import { Connections } from '../connections.js';

/** Every lock in every scenario is taken for this long. */
export const LEASE_MS = 10_000;
/** What a caller is willing to wait (the tuned peers' retry budget). */
export const WAIT_MS = 10_000;

/** What a scenario gets from the runner. */
export interface ScenarioContext {
  readonly url: string;
  /** Libraries to run, rlock first. */
  readonly adapters: readonly LibraryAdapter[];
  /** Smaller sizes, for checking the bench itself. */
  readonly quick: boolean;
  /** Seeded: the order libraries run in each round. */
  readonly random: () => number;
  /** A connection for probes (INFO, PUBSUB), not counted as any library's. */
  readonly admin: Redis;
  readonly log: (line: string) => void;
}

/** A column of a scenario's table; `digits` formats numbers. */
export interface Column {
  readonly key: string;
  readonly header: string;
  readonly digits?: number;
}

export type Cell = number | string | null;

export interface Row {
  readonly id: string;
  readonly label: string;
  readonly values: Record<string, Cell>;
}

/** A target of the issue, checked against rlock's row. */
export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface ScenarioReport {
  readonly id: string;
  readonly title: string;
  /** What was run, with the sizes actually used. */
  readonly setup: string;
  readonly columns: readonly Column[];
  readonly rows: readonly Row[];
  /** The column the rlock ÷ library ratio is taken on. */
  readonly headline: { readonly key: string; readonly higherIsBetter: boolean };
  readonly targets: readonly TargetCheck[];
  readonly notes: readonly string[];
  /** Everything else worth keeping in the JSON (per-round values, command breakdowns). */
  readonly detail: Record<string, unknown>;
}

export interface Scenario {
  /** `1`, `2`, …: the numbering, used by `--scenarios`. */
  readonly id: string;
  readonly title: string;
  run(context: ScenarioContext): Promise<ScenarioReport>;
}

/** Runs `body` with a fresh set of counted connections for `adapter`, closed afterwards. */
export async function withLibrary<T>(
  context: ScenarioContext,
  adapter: LibraryAdapter,
  body: (open: () => Promise<Locker>, connections: Connections) => Promise<T>,
): Promise<T> {
  const connections = new Connections(context.url);
  const lockers: Locker[] = [];
  const open = async (): Promise<Locker> => {
    const locker = await adapter.open(connections);
    lockers.push(locker);
    return locker;
  };
  try {
    return await body(open, connections);
  } finally {
    for (const locker of lockers) await locker.close();
    connections.close();
  }
}

/** The row for `adapter`, or one that says what went wrong. */
export function libraryRow(adapter: LibraryAdapter, values: Record<string, Cell>): Row {
  return { id: adapter.id, label: adapterLabel(adapter), values };
}

export function failedRow(adapter: LibraryAdapter, error: unknown): Row {
  return libraryRow(adapter, { error: error instanceof Error ? error.message : String(error) });
}

/** Whether the time budget of a loop is spent. */
export function pastDeadline(deadline: number): boolean {
  return performance.now() >= deadline;
}

/** Asks until the library acquires (a peer on its defaults may give up first) or time is up. */
export async function acquireUntil(locker: Locker, key: string, deadline: number, onGiveUp: () => void): Promise<Release> {
  for (;;) {
    const release = await locker.acquire(key, LEASE_MS, WAIT_MS);
    if (release) return release;
    onGiveUp();
    if (pastDeadline(deadline)) throw new Error('time budget spent waiting for a handoff');
  }
}

/** rlock's row (or the row of another rlock lock kind, by id), when it ran without error. */
export function rlockValues(rows: readonly Row[], id = 'rlock'): Record<string, Cell> | undefined {
  const row = rows.find((candidate) => candidate.id === id);
  return row && !('error' in row.values) ? row.values : undefined;
}

export function num(value: Cell | undefined): number {
  return typeof value === 'number' ? value : Number.NaN;
}
