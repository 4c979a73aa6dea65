import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitest/config';

// Mirrors tsup's `loader: { '.lua': 'text' }`: a .lua import is its source text.
const luaAsText: Plugin = {
  name: 'lua-as-text',
  transform(code, id) {
    if (!id.endsWith('.lua')) return null;
    return { code: `export default ${JSON.stringify(code)};`, map: null };
  },
};

export default defineConfig({
  plugins: [luaAsText],
  // Examples import the package by name, as users do (tsconfig paths say the same to tsc and tsx).
  resolve: {
    alias: [
      { find: /^rlock\/otel$/, replacement: fileURLToPath(new URL('./lib/otel/index.ts', import.meta.url)) },
      { find: /^rlock$/, replacement: fileURLToPath(new URL('./lib/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['spec/**/*.spec.ts'],
    globalSetup: ['spec/helpers/global-setup.ts'],
    // Files share one spawned redis-server; keys are isolated by a prefix per test,
    // but commandstats and fault-injection tests need the server to themselves.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
