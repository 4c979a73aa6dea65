import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['lib/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // Lua scripts are inlined as strings so neither build reads files at run time.
  loader: { '.lua': 'text' },
});
