import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  sourcemap: true,
  target: 'node20',
  // Lua scripts are inlined as strings so neither build reads files at run time.
  loader: { '.lua': 'text' },
};

export default defineConfig([
  // The package: ESM and CJS with types. Cleans dist/ first, but not the CLI the other build writes.
  // `rlock/otel` is an entry of its own: only it loads @opentelemetry/api (an optional peer).
  { ...shared, entry: { index: 'lib/index.ts', otel: 'lib/otel/index.ts' }, format: ['esm', 'cjs'], dts: true, clean: ['!cli.js', '!cli.js.map'] },
  // The `rlock` command (package.json `bin`): one ESM file, executable (its source starts with a hashbang).
  { ...shared, entry: { cli: 'lib/cli/main.ts' }, format: ['esm'], dts: false, clean: false },
]);
