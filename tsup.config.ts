import { defineConfig, type Options } from 'tsup';
import { luaEsbuildPlugin } from './tools/lua-bundle.mjs';

const shared: Options = {
  target: 'node20',
  // No source maps: with their sources inlined they were 2.2 MB, twice the code they map, and
  // the code they map is the source itself less its types, every name kept (whitespace and
  // comments go, and syntax is shortened, never renamed), so a stack trace names the function
  // that threw without them. The package stays under 1 MB unpacked (CI checks it).
  sourcemap: false,
  minifyWhitespace: true,
  minifySyntax: true,
  esbuildOptions(options) {
    // Node prints the source line of an uncaught error's throw site: without line breaks that line
    // was a whole chunk (22–105 KB of code in every log). Lines of at most ~120 characters keep it
    // short for 0.5% more bytes; keeping all whitespace instead would cost 24% and break 1 MB.
    options.lineLimit = 120;
  },
  // A `.lua` import is its command, includes resolved and named from its text (tools/lua-bundle.mjs),
  // inlined so neither build reads files at run time.
  esbuildPlugins: [luaEsbuildPlugin()],
};

// The public entry points, with types for both module systems.
const entry = { index: 'lib/index.ts', otel: 'lib/otel/index.ts' };

export default defineConfig([
  // ESM: the package and the `rlock` command (package.json `bin`; executable, its source starts
  // with a hashbang) in one build, so the command imports the library's chunks instead of
  // carrying a copy of its own. `rlock/otel` is an entry of its own: only it loads
  // @opentelemetry/api (an optional peer). The renewal thread's program (`renewalThread`) is ESM
  // for both builds: a Worker loads it by its path (lib/renewal-thread/worker-script.ts).
  {
    ...shared,
    entry: { ...entry, cli: 'lib/cli/main.ts', 'renewal-worker': 'lib/renewal-thread/worker-main.ts' },
    format: ['esm'],
    splitting: true,
    dts: { entry },
    clean: true,
  },
  // CJS: the package alone (the command is ESM).
  { ...shared, entry, format: ['cjs'], dts: { entry }, clean: false },
]);
