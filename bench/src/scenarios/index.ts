import { contended } from './contended.js';
import { fairLock } from './fair-lock.js';
import { parallelKeys } from './parallel-keys.js';
import { pingPong } from './ping-pong.js';
import { renewalThread } from './renewal-thread.js';
import type { Scenario } from './scenario.js';
import { semaphore } from './semaphore.js';
import { serverMemory } from './server-memory.js';
import { steadyState } from './steady-state.js';
import { uncontended } from './uncontended.js';

/** The scenarios in the order they run; the numbering is each one's id. */
export const SCENARIOS: readonly Scenario[] = [uncontended, parallelKeys, pingPong, contended, fairLock, steadyState, semaphore, serverMemory, renewalThread];
