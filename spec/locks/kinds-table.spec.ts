import { LockScripts } from '../../lib/scripts/registry.js';
import { describe, expect, it } from 'vitest';
import { inspectLock } from '../../lib/inspect/inspect.js';
import type { RLock } from '../../lib/index.js';
import { KINDS, type HoldKind } from '../../lib/kinds.js';
import { ownerHoldsOf } from '../../lib/owner-calls.js';
import { redisPortOf } from '../../lib/redis/detect.js';
import { moveKindOf } from '../../lib/scripts/lease-move-scripts.js';
import { until, useLockFixture } from '../helpers/fixtures.js';

// Each row of the table of kinds says what the code of its kind does: the object its factory
// makes is of that kind, renews with the row's script, is named by the row's move kind in the
// hand-off scripts, is found by inspection as the row's inspected kind, and its probe reads its
// holder. A row out of step with its kind fails here.

const handedKinds = (Object.keys(KINDS) as HoldKind[]).filter((kind) => KINDS[kind].open !== undefined);

describe('the table of kinds', () => {
  const fx = useLockFixture();

  it('names every kind a handle carries; its factory makes that kind, renewed and moved as the row says', () => {
    expect(handedKinds.sort()).toEqual(['fair-lock', 'fenced', 'lock', 'permit', 'read', 'write']);
    const locks = fx.client();
    for (const kind of handedKinds) {
      const row = KINDS[kind];
      const holds = ownerHoldsOf(row.open!(locks, { name: `row-${kind}`, limit: 2, fair: false }));
      expect(holds?.kind).toBe(kind);
      const target = holds!.target('owner-1');
      expect(target.script).toBe(row.renew);
      expect(moveKindOf(target)).toBe(row.move);
    }
  });

  it('inspection finds each lock kind as its row says, and the row probe finds its holder', async () => {
    const conn = fx.redis();
    const locks = fx.client({}, conn);
    for (const kind of handedKinds) {
      const row = KINDS[kind];
      if (row.inspected === undefined) continue;
      const name = `seen-${kind}`;
      const lock = row.open(locks, { name }) as RLock;
      await lock.lock();
      // A fair lock's keys are a plain lock's until someone queues: queue one.
      const queued = kind === 'fair-lock' ? fx.client().getFairLock(name).tryLock(10_000, 1_000) : undefined;
      if (queued) await until(async () => (await locks.getFairLock(name).getQueue()).length === 1);
      expect((await inspectLock(new LockScripts(redisPortOf(conn, 'redis'), 'spec').inspect, fx.prefix, name))?.kind).toBe(row.inspected);
      expect(await lock.getHolders()).toEqual([expect.objectContaining({ holdCount: 1 })]);
      await lock.unlock();
      if (queued) expect(await queued).toBe(true);
    }
  });
});
