import { readFileSync } from 'node:fs';
import type { GlideClient } from '@valkey/valkey-glide';
import type { Redis } from 'ioredis';
import type { Connections, NodeRedisClient } from '../connections.js';

/** Gives a held lock back. */
export type Release = () => Promise<void>;

/** One worker's view of a library: its own connection(s), one acquire, one release. */
export interface Locker {
  /** Where this worker's lock commands go: the EVALSHA floor is measured here. */
  readonly connection: Redis | NodeRedisClient | GlideClient;
  /**
   * Takes `key` for `leaseMs`, waiting the way the library is configured to (a tuned peer gives
   * up after `waitMs`; a peer on its defaults after its own retry budget). Resolves with the
   * release, or null when the library gave up.
   */
  acquire(key: string, leaseMs: number, waitMs: number): Promise<Release | null>;
  close(): Promise<void>;
}

/** A library in one configuration. */
export interface LibraryAdapter {
  /** Stable id used in results and `--libraries`, e.g. `redlock4-tuned`. */
  readonly id: string;
  /** Package name and installed version. */
  readonly library: string;
  readonly version: string;
  /** `defaults`, `tuned`, or how the library waits when it has no retry settings. */
  readonly variant: string;
  /** How this configuration waits, in words. */
  readonly waiting: string;
  /** The raw baseline its throughput is compared with: the one on the same client (default `raw-set-nx`, ioredis). */
  readonly baseline?: string;
  /** Anything a reader must know (an unsupported engine, a missing option). */
  readonly note?: string;
  /** A new worker with its own connection(s), all opened from `connections`. */
  open(connections: Connections): Promise<Locker>;
}

/** The tuned peers' polling: every 10 ms with a small jitter, for as long as the caller waits. */
export const TUNED_RETRY_DELAY_MS = 10;
export const TUNED_RETRY_JITTER_MS = 2;

/** Retries that fit in `waitMs` at the tuned delay (the budget is the wait). */
export function tunedRetries(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / TUNED_RETRY_DELAY_MS));
}

/** `name@version` of a package installed in bench/node_modules (also under an npm alias). */
export function installedVersion(directory: string): string {
  const url = new URL(`../../node_modules/${directory}/package.json`, import.meta.url);
  const manifest = JSON.parse(readFileSync(url, 'utf8')) as { version: string };
  return manifest.version.replace(/^v/, '');
}

/** Whether `id` is one of rlock's own lock kinds: drawn in rlock's colour, left out of the rlock ÷ peer ratios. */
export function isRlock(id: string): boolean {
  return id === 'rlock' || id.startsWith('rlock-');
}

/** `label` as shown in tables: `redlock 4.2.0 (tuned)`. */
export function adapterLabel(adapter: LibraryAdapter): string {
  return `${[adapter.library, adapter.version].filter(Boolean).join(' ')} (${adapter.variant})`;
}
