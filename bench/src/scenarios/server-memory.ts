import type { Redis } from 'ioredis';
import type { Locker } from '../adapters/adapter.js';
import { shuffled } from '../stats.js';
import { failedRow, LEASE_MS, libraryRow, num, rlockValues, WAIT_MS, withLibrary, type Row, type Scenario } from './scenario.js';

const SIZES = { full: { tasks: 20, names: 1_000, cycles: 100_000, sameLock: 1_000 }, quick: { tasks: 20, names: 200, cycles: 10_000, sameLock: 200 } };
/** How much memory an idle server may hold above the start once the run is over. */
const TARGET_MB = 1;

/** `tasks` tasks, task i cycling over names i, i + tasks, …: every name sees releases, none is contended. */
async function cycleNames(locker: Locker, keyBase: string, tasks: number, names: number, cycles: number): Promise<number> {
  let failed = 0;
  const perTask = Math.ceil(cycles / tasks);
  await Promise.all(
    Array.from({ length: tasks }, async (_, task) => {
      for (let i = 0; i < perTask; i += 1) {
        const name = (task + i * tasks) % names;
        const release = await locker.acquire(`${keyBase}:${name}`, LEASE_MS, WAIT_MS);
        if (release) await release();
        else failed += 1;
      }
    }),
  );
  return failed;
}

/** used_memory of the server, bytes. */
async function usedMemory(admin: Redis): Promise<number> {
  const info = await admin.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
}

/** Keys of the server whose name starts with `pattern` (a SCAN pattern). */
async function keysUnder(admin: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `${pattern}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/**
 * 8. What uncontended cycles leave in Redis: keys and memory after 100,000 cycles on 1,000
 * names, and the keys left after many releases of one lock by one client.
 */
export const serverMemory: Scenario = {
  id: '8',
  title: 'What uncontended cycles leave in Redis',
  async run(context) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const rows = new Map<string, Row>();
    for (const adapter of shuffled(context.adapters, context.random)) {
      try {
        const values = await withLibrary(context, adapter, async (open) => {
          const locker = await open();
          // The scenario's keys of earlier libraries are gone (this server is the bench's own).
          await context.admin.flushdb();
          const idle = await usedMemory(context.admin);
          const keyBase = `s8:${adapter.id}`;
          const failed = await cycleNames(locker, `${keyBase}:n`, size.tasks, size.names, size.cycles);
          const keysLeft = await context.admin.dbsize();
          const memoryKb = ((await usedMemory(context.admin)) - idle) / 1024;
          const sameKey = `${keyBase}:one`;
          for (let i = 0; i < size.sameLock; i += 1) await (await locker.acquire(sameKey, LEASE_MS, WAIT_MS))?.();
          // Every key the library left for this one name (each library's keys contain the name).
          const sameLockKeys = (await keysUnder(context.admin, `*${sameKey}`)).length;
          const ttls = await Promise.all((await keysUnder(context.admin, '')).map((key) => context.admin.pttl(key)));
          return { failed, keysLeft, memoryKb, sameLockKeys, maxTtlS: Math.max(0, ...ttls) / 1000 };
        });
        rows.set(adapter.id, libraryRow(adapter, values));
        context.log(`  ${adapter.id}: ${values.keysLeft} keys, ${values.memoryKb.toFixed(0)} KB above idle; one lock: ${values.sameLockKeys} keys`);
      } catch (error) {
        rows.set(adapter.id, failedRow(adapter, error));
        context.log(`  ${adapter.id} failed: ${String(error)}`);
      }
    }
    const ordered = context.adapters.map((adapter) => rows.get(adapter.id)!);
    const mine = rlockValues(ordered);
    return {
      id: this.id,
      title: this.title,
      setup:
        `${size.tasks} tasks on one connection, ${size.cycles.toLocaleString('en')} lock+unlock cycles spread over ` +
        `${size.names.toLocaleString('en')} names (no name contended), on an emptied database; then ` +
        `${size.sameLock.toLocaleString('en')} cycles of one client on one more name. Keys left and used_memory above ` +
        'the empty database right after the cycles; the keys left whose name contains the one name; the longest TTL left (s).',
      columns: [
        { key: 'keysLeft', header: 'keys left', digits: 0 },
        { key: 'memoryKb', header: 'memory above idle KB', digits: 0 },
        { key: 'sameLockKeys', header: `keys after ${size.sameLock.toLocaleString('en')} releases of one lock`, digits: 0 },
        { key: 'maxTtlS', header: 'longest TTL left s', digits: 1 },
        { key: 'failed', header: 'failed', digits: 0 },
      ],
      rows: ordered,
      headline: { key: 'memoryKb', higherIsBetter: false },
      targets: mine
        ? [
            {
              target: `memory after the cycles ≤ ${TARGET_MB} MB above the idle server`,
              measured: `${num(mine.memoryKb).toFixed(0)} KB`,
              met: num(mine.memoryKb) <= TARGET_MB * 1024,
            },
            {
              target: 'after many releases of one lock by one client, at most one record key of that pair',
              measured: `${num(mine.sameLockKeys).toFixed(0)} key(s)`,
              met: num(mine.sameLockKeys) <= 1,
            },
          ]
        : [],
      notes: ['used_memory also moves with the server’s own buffers: a few tens of KB either way are noise.'],
      detail: { sizes: size },
    };
  },
};
