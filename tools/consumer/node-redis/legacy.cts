// The same package from CommonJS (require): its own typings (index.d.cts).
import { createClient } from 'redis';
import rlock = require('rlock');

export async function open(): Promise<rlock.RLock> {
  const locks = new rlock.LockClient(await createClient().connect());
  return locks.getLock('report');
}
