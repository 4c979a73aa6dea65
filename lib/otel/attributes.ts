import type { Attributes } from '@opentelemetry/api';
import { lockAttributes } from './conventions.js';

/** Maps a lock name to the `rlock.lock.name` attribute, or to none (undefined). */
export type LockNameAttribute = (name: string) => string | undefined;

/** The attributes every instrument of one lock carries: its kind, and its name if the option maps it. */
export function lockScope(kind: string, name: string, lockName: LockNameAttribute | undefined): Attributes {
  const attributes: Attributes = { [lockAttributes.kind]: kind };
  const mapped = lockName?.(name);
  if (typeof mapped === 'string') attributes[lockAttributes.name] = mapped;
  return attributes;
}

/** `error.type`: the error's class name (bounded), or `_OTHER`. */
export function errorType(error: unknown): string {
  return error instanceof Error ? error.name : '_OTHER';
}

/** `server.address` and `server.port` of a `host:port` (or a socket path). */
export function serverAttributes(address: string | undefined): Attributes {
  if (address === undefined) return {};
  const colon = address.lastIndexOf(':');
  const port = colon === -1 ? NaN : Number(address.slice(colon + 1));
  if (address.startsWith('unix:')) return { [lockAttributes.serverAddress]: address.slice('unix:'.length) };
  if (!Number.isInteger(port)) return { [lockAttributes.serverAddress]: address };
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { [lockAttributes.serverAddress]: host, [lockAttributes.serverPort]: port };
}
