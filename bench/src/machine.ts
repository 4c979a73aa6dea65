import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import type { Redis } from 'ioredis';

/** Where a run happened: what the numbers depend on. */
export interface Machine {
  readonly cores: number;
  readonly cpu: string;
  readonly memoryGb: number;
  readonly os: string;
  readonly node: string;
  readonly redis: string;
  /** 1-minute load average at the start and the end: a busy machine shows here. */
  loadStart: number;
  loadEnd: number;
}

export async function describeMachine(admin: Redis): Promise<Machine> {
  const server = await admin.info('server');
  const redisVersion = /^redis_version:(\S+)/m.exec(server)?.[1] ?? 'unknown';
  const list = cpus();
  return {
    cores: list.length,
    cpu: list[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    os: `${osType()} ${release()}`,
    node: process.version,
    redis: redisVersion,
    loadStart: loadavg()[0]!,
    loadEnd: Number.NaN,
  };
}
