// The same package from CommonJS (require): its own typings (index.d.cts).
import { Redis } from 'ioredis';
import rlock = require('rlock');

const locks = new rlock.LockClient(new Redis());
export const lock: rlock.RLock = locks.getLock('report');
export const code: rlock.LockErrorCode = 'LOCK_LOST';
