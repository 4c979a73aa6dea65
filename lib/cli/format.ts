import { describeProcess } from '../inspect/identities.js';
import type { LockInspection } from '../inspect/types.js';

/** A duration for people: `850 ms`, `29.6 s`, `4 min 05 s`; a TTL of -1 is `no TTL`. */
export function duration(ms: number): string {
  if (ms === -1) return 'no TTL';
  if (ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${String(Math.floor((ms % 60_000) / 1_000)).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** Left-aligned columns, two spaces apart. */
export function table(header: string[], rows: string[][], indent = '  '): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => indent + cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}

const KIND_TITLE: Record<LockInspection['kind'], string> = {
  lock: 'reentrant lock',
  fenced: 'fenced lock',
  fair: 'fair lock',
  'read-write': 'read-write lock',
};

/** The `rlock inspect` text view of one lock. */
export function renderInspection(view: LockInspection, keyPrefix: string): string {
  const lines: string[] = [];
  lines.push(`lock "${view.name}"  (${KIND_TITLE[view.kind]}, key {${keyPrefix}:${view.name}})`);
  const held = view.holders.length > 0;
  lines.push(`state:    ${held ? `held, TTL ${duration(view.ttl)}` : 'free'}`);
  if (view.kind === 'fenced') lines.push(`token:    ${view.lastToken ?? '-'}${held ? ' (the holder’s)' : ' (last handed out)'}`);
  if (held) {
    lines.push(`holders:  ${view.holders.length}`);
    const rw = view.kind === 'read-write';
    const header = rw ? ['MODE', 'OWNER', 'HOLDS', 'TTL', 'PROCESS'] : ['OWNER', 'HOLDS', 'TTL', 'PROCESS'];
    const rows = view.holders.map((h) => [...(rw ? [h.mode ?? '-'] : []), h.owner, String(h.holdCount), duration(h.ttl), describeProcess(h.process)]);
    lines.push(...table(header, rows));
  }
  if (view.kind === 'fair' || view.queueLength > 0) {
    lines.push(`queue:    ${view.queueLength === 0 ? 'empty' : `${view.queueLength} waiting, head first`}`);
    const queued = view.queue.map((w, i) => [String(i + 1), w.owner, duration(w.waitedMs), describeProcess(w.process)]);
    if (queued.length > 0) lines.push(...table(['#', 'WAITER', 'WAITED', 'PROCESS'], queued));
  }
  const waiting = (title: string, count: number, list: LockInspection['waitingClients']): void => {
    lines.push(`${title}${count === 0 ? 'none' : count}`);
    if (list.length > 0) lines.push(...table(['CLIENT', 'WAITING', 'PROCESS'], list.map((c) => [c.clientId, duration(c.waitedMs), describeProcess(c.process)])));
  };
  if (view.kind === 'read-write') {
    waiting('waiting writers (clients): ', view.waitingClientCount, view.waitingClients);
    waiting('waiting readers (clients): ', view.waitingReaderCount, view.waitingReaders);
  } else if (view.kind !== 'fair' || view.waitingClientCount > 0) {
    waiting('waiting clients: ', view.waitingClientCount, view.waitingClients);
  }
  return lines.join('\n');
}
