// The same package from CommonJS (require): its own typings (index.d.cts).
import { Redis } from 'iovalkey';
import rlock = require('rlock');

const locks = new rlock.LockClient(new Redis());
export const lock: rlock.RLock = locks.getLock('report');
