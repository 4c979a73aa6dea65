import type { LibraryAdapter } from './adapter.js';
import { redisSemaphoreDefaults, redisSemaphoreTuned } from './redis-semaphore.js';
import { redlock4Defaults, redlock4Tuned } from './redlock4.js';
import { redlock5Defaults, redlock5Tuned } from './redlock5.js';
import { redlockUniversalDefaults, redlockUniversalTuned } from './redlock-universal.js';
import { rlock } from './rlock.js';
import { rlockFair } from './rlock-fair.js';
import { rlockGlide } from './rlock-glide.js';
import { rlockNodeRedis } from './rlock-node-redis.js';
import { sesamecareRedlockDefaults, sesamecareRedlockTuned } from './sesamecare-redlock.js';

/**
 * Every library in every configuration, rlock first (the one the ratios are about), then rlock's
 * fair lock, rlock on node-redis and rlock on Valkey GLIDE.
 */
export const ADAPTERS: readonly LibraryAdapter[] = [
  rlock,
  rlockFair,
  rlockNodeRedis,
  rlockGlide,
  redlock4Defaults,
  redlock4Tuned,
  redlock5Defaults,
  redlock5Tuned,
  sesamecareRedlockDefaults,
  sesamecareRedlockTuned,
  redisSemaphoreDefaults,
  redisSemaphoreTuned,
  redlockUniversalDefaults,
  redlockUniversalTuned,
];
