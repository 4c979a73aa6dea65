import type { Redis } from 'ioredis';
import type { RReadWriteLock } from '../../lib/index.js';

/** What a read-write contention run saw. */
export interface ReadWriteContendResult {
  /** Read and write critical sections completed. */
  reads: number;
  writes: number;
  /** Times a writer was inside together with anyone else (seen through Redis counters). */
  violations: number;
  /** The most readers seen inside at once: above 1 shows that readers do share. */
  maxReaders: number;
}

const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

/**
 * `tasks` tasks × `rounds` rounds; every `writerEvery`-th task writes, the others read. Inside,
 * a writer INCRs the writers' counter and reads the readers' (expecting 1 and 0); a reader INCRs
 * the readers' counter and reads the writers' (expecting 0). Counters live in Redis, so holders
 * in any client or process are seen.
 */
export async function contendReadWrite(
  lockFor: (task: number) => RReadWriteLock,
  probe: Redis,
  probeKey: string,
  tasks: number,
  rounds: number,
  writerEvery = 3,
): Promise<ReadWriteContendResult> {
  const result: ReadWriteContendResult = { reads: 0, writes: 0, violations: 0, maxReaders: 0 };
  const writersKey = `${probeKey}:writers`;
  const readersKey = `${probeKey}:readers`;
  const counts = async (incr: string, get: string): Promise<[number, number]> => {
    const replies = (await probe.multi().incr(incr).get(get).exec()) ?? [];
    return [Number(replies[0]?.[1]), Number(replies[1]?.[1] ?? 0)];
  };
  await Promise.all(
    Array.from({ length: tasks }, async (_, task) => {
      const rw = lockFor(task);
      const writer = task % writerEvery === 0;
      const lock = writer ? rw.writeLock() : rw.readLock();
      for (let round = 0; round < rounds; round += 1) {
        await lock.lock();
        try {
          if (writer) {
            const [writers, readers] = await counts(writersKey, readersKey);
            if (writers !== 1 || readers !== 0) result.violations += 1;
            await pause();
            if ((await probe.decr(writersKey)) !== 0) result.violations += 1;
            result.writes += 1;
          } else {
            const [readers, writers] = await counts(readersKey, writersKey);
            if (writers !== 0) result.violations += 1;
            result.maxReaders = Math.max(result.maxReaders, readers);
            await pause();
            await probe.decr(readersKey);
            result.reads += 1;
          }
        } finally {
          await lock.unlock();
        }
      }
    }),
  );
  return result;
}
