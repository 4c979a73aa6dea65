import { describe, expect, it } from 'vitest';
import { LockLostError, type Lease, type LockClient, type Permit, type RedisConnection } from '../../lib/index.js';
import { sleep, until } from '../helpers/fixtures.js';
import { ping } from '../helpers/clients.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { ALL_KINDS, take } from '../holding/kinds.js';

// The proxy lets Redis run a call, swallows its reply and resets the socket; the client resends
// the call after it reconnects. An extend or adopt that reaches Redis twice is applied once.

describe('resend: extend and adopt are applied once', () => {
  const rig = useFaultRig();

  const proxied = async (): Promise<LockClient> => {
    const redis: RedisConnection = rig.lockConnect('proxy');
    await ping(redis);
    return rig.client(redis);
  };
  const direct = (): LockClient => rig.client(rig.lockConnect('direct'));
  const mainKey = (kind: string, name: string): string => (kind === 'permit' ? `${rig.key(name)}:semaphore` : rig.key(name));

  for (const kind of ALL_KINDS) {
    it(`${kind}: an extend whose reply was lost is not applied again by its resend`, async () => {
      const client = await proxied();
      const held = (await take(client, kind, 'x', { leaseTime: 5_000 }))!;
      rig.proxy.swallowReplies(1, { thenBlackhole: true });
      const extended = held.extend(20_000);
      await until(() => rig.proxy.blackholed);
      // Applied once already: 20 s. Shorten it behind the client's back; a second application
      // of the resent call would make it 20 s again.
      const key = mainKey(kind, 'x');
      expect(await rig.admin.pttl(key)).toBeGreaterThan(15_000);
      await rig.admin.pexpire(key, 3_000);
      if (kind === 'read' || kind === 'write') await rig.admin.pexpire(`${key}:readers`, 3_000);
      await sleep(200); // reconnected; the resend waits in the blackhole
      rig.proxy.heal();
      await extended;
      expect(await rig.admin.pttl(key)).toBeLessThanOrEqual(3_000);
      held.signal.addEventListener('abort', () => undefined);
      client.on('lost', () => undefined);
    });

    it(`${kind}: an adopt whose reply was lost still adopts (its resend is answered), and nobody else can`, async () => {
      const from = direct();
      const held = (await take(from, kind, 'x'))!;
      const handle = await held.handOff();
      const adopter = await proxied();
      rig.proxy.swallowReplies(1, { thenBlackhole: true });
      const adopting = adopter.adopt(handle);
      await until(() => rig.proxy.blackholed);
      // The claim is taken in Redis: another adopter is refused meanwhile.
      await expect(direct().adopt(handle)).rejects.toBeInstanceOf(LockLostError);
      await sleep(200);
      rig.proxy.heal();
      const adopted = (await adopting) as Lease | Permit;
      expect(adopted.signal.aborted).toBe(false);
      await adopted.release();
      expect(await rig.admin.exists(mainKey(kind, 'x'))).toBe(0);
    });
  }
});
