import { describe, expect, it } from 'vitest';

// The specs run on the runtime asked for: Node.js by default, Bun when tools/bun-smoke.sh runs
// them with `bun --bun` (RLOCK_TEST_RUNTIME=bun), so a smoke run on Bun cannot pass on Node.
describe('runtime', () => {
  it('is the one RLOCK_TEST_RUNTIME names (node by default)', () => {
    const runtime = typeof process.versions.bun === 'string' ? 'bun' : 'node';
    expect(runtime).toBe(process.env.RLOCK_TEST_RUNTIME ?? 'node');
  });
});
