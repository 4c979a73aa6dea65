import { ExecutionError, Redlock } from '@sesamecare-oss/redlock';
import { installedVersion } from './adapter.js';
import { redlockV5Adapters } from './redlock-v5-api.js';

// A maintained fork of redlock 5, with the same API.
const adapters = redlockV5Adapters('sesamecare-redlock', '@sesamecare-oss/redlock', installedVersion('@sesamecare-oss/redlock'), {
  Redlock,
  ExecutionError,
});

export const sesamecareRedlockDefaults = adapters.defaults;
export const sesamecareRedlockTuned = adapters.tuned;
