import type { Redis } from 'ioredis';
import type { RLock } from '../../lib/index.js';

/** What a contention run saw. */
export interface ContendResult {
  /** Critical sections completed. */
  entries: number;
  /** Times a task entered while another was inside (seen through a Redis counter). */
  violations: number;
}

/**
 * `tasks` tasks × `rounds` rounds of lock → critical section with awaits → unlock. Inside,
 * each task INCRs a shared Redis counter and expects 1: any other value means two holders
 * at once, whichever process or client they are in.
 */
export async function contend(
  lockFor: (task: number) => RLock,
  probe: Redis,
  probeKey: string,
  tasks: number,
  rounds: number,
): Promise<ContendResult> {
  const result: ContendResult = { entries: 0, violations: 0 };
  await Promise.all(
    Array.from({ length: tasks }, async (_, task) => {
      const lock = lockFor(task);
      for (let round = 0; round < rounds; round += 1) {
        await lock.lock();
        try {
          if ((await probe.incr(probeKey)) !== 1) result.violations += 1;
          await new Promise((resolve) => setImmediate(resolve));
          if ((await probe.decr(probeKey)) !== 0) result.violations += 1;
          result.entries += 1;
        } finally {
          await lock.unlock();
        }
      }
    }),
  );
  return result;
}
