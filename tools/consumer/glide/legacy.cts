// The same package from CommonJS (require): its own typings (index.d.cts).
import { GlideClient } from '@valkey/valkey-glide';
import rlock = require('rlock');

export async function report(): Promise<rlock.RLock> {
  const locks = new rlock.LockClient(await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: 6379 }] }));
  return locks.getLock('report');
}
