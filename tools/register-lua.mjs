// `node --import ./tools/register-lua.mjs`: lets Node load `.lua` files as rlock commands,
// the same way tsup and vitest build them (used by the demo and test child processes).
import { register } from 'node:module';

register('./lua-loader.mjs', import.meta.url);
