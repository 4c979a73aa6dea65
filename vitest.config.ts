import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitest/config';
import { luaModule } from './tools/lua-bundle.mjs';
import { TEST_WORKERS } from './spec/helpers/workers.js';

// As in the tsup build: a .lua import is its command, built by tools/lua-bundle.mjs.
const luaCommands: Plugin = {
  name: 'rlock-lua',
  transform(_code, id) {
    if (!id.endsWith('.lua')) return null;
    const { code, files } = luaModule(id);
    for (const file of files) this.addWatchFile(file);
    return { code, map: null };
  },
};

// Specs that time a fault to tens of milliseconds (a holder told before a rival gets in, node
// replies within a RedLock's budget), block the event loop for seconds and time a rival against it,
// or wait for a failover: they run after the rest, two files at a time (a core each).
const ALONE = [
  'spec/faults/late-answers.spec.ts',
  'spec/faults/redis-errors.spec.ts',
  'spec/faults/redlock-*.spec.ts',
  'spec/faults/release-failure.spec.ts',
  'spec/faults/silent-partition.spec.ts',
  'spec/leadership/faults.spec.ts',
  'spec/locks/red-lock.spec.ts',
  'spec/renewal-thread/*.spec.ts',
  'spec/sentinel/**/*.spec.ts',
  'spec/synchronizers/sentinel.spec.ts',
];
/** How many of them run at once. */
const ALONE_WORKERS = process.env.REDIS_URL ? 1 : 2;

export default defineConfig({
  plugins: [luaCommands],
  // Examples import the package by name, as users do (tsconfig paths say the same to tsc and tsx).
  resolve: {
    alias: [
      { find: /^rlock\/otel$/, replacement: fileURLToPath(new URL('./lib/otel/index.ts', import.meta.url)) },
      { find: /^rlock$/, replacement: fileURLToPath(new URL('./lib/index.ts', import.meta.url)) },
    ],
  },
  test: {
    globalSetup: ['spec/helpers/global-setup.ts'],
    // rlock's warnings that specs cause on purpose are printed with the test that caused them.
    setupFiles: ['spec/helpers/label-warnings.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['spec/**/*.spec.ts'],
          exclude: ALONE,
          // TEST_WORKERS files at a time, each worker on a spawned redis-server of its own (keys
          // are isolated by a prefix per test; command counts need the server to the file).
          fileParallelism: TEST_WORKERS > 1,
          maxWorkers: TEST_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          fileParallelism: ALONE_WORKERS > 1,
          maxWorkers: ALONE_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
