import type { Redis } from 'ioredis';

/** What the server did between two snapshots: commands (scripts' inner calls included) and CPU. */
export interface ServerWork {
  /** Calls per command, INFO excluded (the bench's own probe). */
  readonly calls: Record<string, number>;
  /** usec per command as commandstats has it (a script's includes its inner calls). */
  readonly usecByCommand: Record<string, number>;
  readonly totalCalls: number;
  /**
   * Time the server spent in the commands clients sent, µs (INFO commandstats usec). A script's
   * usec already includes the calls it makes, which commandstats also lists under their own
   * names: only the share of a command's calls that clients sent is counted, so nothing is
   * counted twice.
   */
  readonly usec: number;
  /** used_cpu_user + used_cpu_sys, s. */
  readonly cpuSeconds: number;
}

interface Snapshot {
  readonly stats: Map<string, { calls: number; usec: number }>;
  readonly cpuSeconds: number;
}

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info);
  if (!match) throw new Error(`INFO has no ${name}`);
  return Number(match[1]);
}

/** INFO commandstats and cpu, read over `admin` (a connection whose commands are not counted). */
export async function serverSnapshot(admin: Redis): Promise<Snapshot> {
  const [commandstats, cpu] = await Promise.all([admin.info('commandstats'), admin.info('cpu')]);
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const match of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return { stats, cpuSeconds: field(cpu, 'used_cpu_user') + field(cpu, 'used_cpu_sys') };
}

/** The server's work between two snapshots; `sent` is what the clients sent meanwhile, by name. */
export function serverWork(before: Snapshot, after: Snapshot, sent: ReadonlyMap<string, number>): ServerWork {
  const calls: Record<string, number> = {};
  const usecByCommand: Record<string, number> = {};
  let totalCalls = 0;
  let usec = 0;
  for (const [name, now] of after.stats) {
    if (name === 'info') continue;
    const then = before.stats.get(name) ?? { calls: 0, usec: 0 };
    if (now.calls === then.calls) continue;
    const callsBetween = now.calls - then.calls;
    calls[name] = callsBetween;
    usecByCommand[name] = now.usec - then.usec;
    totalCalls += callsBetween;
    usec += (now.usec - then.usec) * Math.min(1, (sent.get(name) ?? 0) / callsBetween);
  }
  return { calls, usecByCommand, totalCalls, usec, cpuSeconds: after.cpuSeconds - before.cpuSeconds };
}

/** Pub/sub channels and patterns the server has subscribers for. */
export async function subscriptionCount(admin: Redis): Promise<number> {
  const [channels, patterns] = await Promise.all([admin.pubsub('CHANNELS'), admin.pubsub('NUMPAT')]);
  return (channels as string[]).length + Number(patterns);
}
