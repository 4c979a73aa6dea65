import { createInterface } from 'node:readline/promises';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisPort } from '../redis/port.js';
import type { LockScripts } from '../scripts/registry.js';
import { LockClient } from '../client.js';
import { describeProcess, inspectWithProcesses } from '../inspect/identities.js';
import type { InspectedKind, LockInspection } from '../inspect/types.js';
import { NotFoundError, UsageError } from './errors.js';
import { duration, renderInspection, table } from './format.js';
import { listLocks } from './list.js';

/** What every command gets. */
export interface CommandContext {
  /** The connection, as rlock's port sees it. */
  readonly redis: RedisPort;
  /** rlock's scripts on that connection (the inspect and identity reads). */
  readonly scripts: LockScripts;
  /** The same connection, as the client library made it. */
  readonly connection: RedisConnection;
  readonly keyPrefix: string;
  readonly json: boolean;
  readonly out: (text: string) => void;
  /** Set by Ctrl-C: a watch stops at its next turn. */
  readonly stopped: () => boolean;
}

export const KINDS: readonly InspectedKind[] = ['lock', 'fenced', 'fair', 'read-write'];

async function findLock(ctx: CommandContext, name: string, kind: InspectedKind | undefined): Promise<LockInspection> {
  const view = await inspectWithProcesses(ctx.scripts, ctx.keyPrefix, name);
  if (!view) throw new NotFoundError(`no lock "${name}" under prefix "${ctx.keyPrefix}" (nothing of it is in Redis: free, or never used)`);
  // A fair lock an older rlock took, with an empty queue, has no `fair` mark: it looks like a plain lock.
  if (kind !== undefined && view.kind !== kind && !(kind === 'fair' && view.kind === 'lock')) {
    throw new NotFoundError(`lock "${name}" is a ${view.kind} lock, not a ${kind} lock`);
  }
  return view;
}

export async function inspectCommand(ctx: CommandContext, name: string, kind: InspectedKind | undefined): Promise<void> {
  const view = await findLock(ctx, name, kind);
  ctx.out(ctx.json ? JSON.stringify({ prefix: ctx.keyPrefix, ...view }) : renderInspection(view, ctx.keyPrefix));
}

export async function listCommand(ctx: CommandContext, match: string): Promise<void> {
  const locks = await listLocks(ctx.redis, ctx.scripts, ctx.keyPrefix, match);
  if (ctx.json) ctx.out(JSON.stringify({ prefix: ctx.keyPrefix, match, locks }));
  else if (locks.length > 0) {
    const rows = locks.map((l) => [
      l.name,
      l.kind,
      l.holders === undefined ? '-' : l.holders === 0 ? 'free' : String(l.holders),
      l.ttl === undefined || l.ttl === -2 ? '-' : duration(l.ttl),
      l.waiting === undefined ? '-' : String(l.waiting),
      l.heldBy === undefined || l.heldBy.length === 0 ? '-' : l.heldBy.map(describeProcess).join(', '),
    ]);
    ctx.out(table(['NAME', 'KIND', 'HOLDERS', 'TTL', 'WAITING', 'HELD BY'], rows, '').join('\n'));
  }
  if (locks.length === 0) throw new NotFoundError(`no lock under prefix "${ctx.keyPrefix}" matches "${match}"`);
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export async function forceUnlockCommand(ctx: CommandContext, name: string, kind: InspectedKind | undefined, yes: boolean): Promise<void> {
  const view = await findLock(ctx, name, kind);
  if (view.holders.length === 0) throw new NotFoundError(`lock "${name}" is not held: nothing to remove`);
  const what = view.holders.map((h) => `${h.mode ? `${h.mode} ` : ''}${h.owner} (holds ${h.holdCount}, TTL ${duration(h.ttl)}, ${describeProcess(h.process)})`);
  if (!yes) {
    if (!process.stdin.isTTY) throw new UsageError(`force-unlock of "${name}" needs --yes when there is no terminal to ask on`);
    process.stderr.write(`${renderInspection(view, ctx.keyPrefix)}\n`);
    if (!(await confirm(`Force-unlock "${name}", taking it from ${view.holders.length} holder(s)? [y/N] `))) {
      throw new NotFoundError('not confirmed: nothing removed');
    }
  }
  // The lock's own idempotent force-unlock scripts, through a LockClient: they wake the next
  // waiter (or tell the fair queue's head) as an unlock would.
  const locks = new LockClient(ctx.connection, { keyPrefix: ctx.keyPrefix });
  let removed: boolean;
  try {
    if (view.kind === 'read-write') {
      const rw = locks.getReadWriteLock(name);
      removed = (await rw.writeLock().forceUnlock()) || (await rw.readLock().forceUnlock());
    } else if (view.kind === 'fair') removed = await locks.getFairLock(name).forceUnlock();
    else if (view.kind === 'fenced') removed = await locks.getFencedLock(name).forceUnlock();
    else removed = await locks.getLock(name).forceUnlock();
  } finally {
    await locks.close();
  }
  if (!removed) throw new NotFoundError(`lock "${name}" was released before the force-unlock reached it: nothing removed`);
  if (ctx.json) ctx.out(JSON.stringify({ prefix: ctx.keyPrefix, name, kind: view.kind, removed: true, holders: view.holders }));
  else ctx.out([`force-unlocked "${name}" (${view.kind}); removed:`, ...what.map((line) => `  ${line}`)].join('\n'));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function watchCommand(ctx: CommandContext, name: string, kind: InspectedKind | undefined, intervalMs: number, count: number): Promise<void> {
  const clear = !ctx.json && process.stdout.isTTY;
  for (let turn = 1; turn <= count && !ctx.stopped(); turn += 1) {
    const view = await inspectWithProcesses(ctx.scripts, ctx.keyPrefix, name);
    if (view && kind !== undefined && view.kind !== kind && !(kind === 'fair' && view.kind === 'lock')) {
      throw new NotFoundError(`lock "${name}" is a ${view.kind} lock, not a ${kind} lock`);
    }
    const at = new Date().toISOString().slice(11, 19);
    if (ctx.json) ctx.out(JSON.stringify({ at: new Date().toISOString(), prefix: ctx.keyPrefix, name, lock: view ?? null }));
    else {
      const header = `rlock watch "${name}"  every ${duration(intervalMs)}  ${at}${clear ? '  (Ctrl-C to stop)' : ''}`;
      const body = view ? renderInspection(view, ctx.keyPrefix) : `lock "${name}": free (nothing of it is in Redis)`;
      ctx.out(`${clear ? '\u001b[2J\u001b[H' : turn > 1 ? '\n' : ''}${header}\n\n${body}`);
    }
    if (turn < count) {
      const until = performance.now() + intervalMs;
      while (!ctx.stopped() && performance.now() < until) await sleep(Math.min(100, until - performance.now()));
    }
  }
}
