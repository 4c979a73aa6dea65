// Node loader hook (registered by register-lua.mjs): a `.lua` import is its command, built as
// tsup and vitest build it (lua-bundle.mjs).
import { fileURLToPath } from 'node:url';
import { luaModule } from './lua-bundle.mjs';

export function load(url, context, nextLoad) {
  if (!url.endsWith('.lua')) return nextLoad(url, context);
  return { format: 'module', source: luaModule(fileURLToPath(url)).code, shortCircuit: true };
}
