import { createRequire } from 'node:module';
import { installedVersion } from './adapter.js';
import { redlockV5Adapters, type RedlockV5Api } from './redlock-v5-api.js';

// The beta's types cannot be resolved through its exports map: loaded untyped, typed by its API.
const { default: Redlock, ExecutionError } = createRequire(import.meta.url)('redlock5') as {
  default: RedlockV5Api['Redlock'];
  ExecutionError: RedlockV5Api['ExecutionError'];
};

const adapters = redlockV5Adapters('redlock5', 'redlock', installedVersion('redlock5'), { Redlock, ExecutionError });

export const redlock5Defaults = adapters.defaults;
export const redlock5Tuned = adapters.tuned;
