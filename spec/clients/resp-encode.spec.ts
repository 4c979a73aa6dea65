import fc from 'fast-check';
import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { encodeCommand } from '../../lib/redis/resp-encode.js';
import { useLockFixture } from '../helpers/fixtures.js';
import { ON_GLIDE } from '../helpers/clients.js';

// rlock writes its script calls on ioredis and iovalkey in Redis' protocol itself (one buffer per
// call). A byte count off by one for a multi-byte character would desynchronize the connection.

/** ioredis' own encoding of the same command, as bytes. */
function ioredisBytes(name: string, args: readonly (string | Buffer)[]): Buffer {
  const writable = new Command(name, [...args]).toWritable(undefined as never);
  return typeof writable === 'string' ? Buffer.from(writable, 'utf8') : writable;
}

const part = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 300 }),
  fc.stringMatching(/^[0-9]{1,12}$/),
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
);

describe('a script call in Redis’ protocol', () => {
  it('is byte for byte what ioredis writes, for any text and buffers', () => {
    fc.assert(
      fc.property(fc.constantFrom('evalsha', 'eval', 'GET'), fc.array(part, { maxLength: 14 }), (name, args) => {
        expect(encodeCommand(name, args).equals(ioredisBytes(name, args))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts lengths of 9, 10, 99 and 100 bytes right (a digit more)', () => {
    for (const length of [0, 1, 9, 10, 99, 100, 999, 1000, 10_000]) {
      const text = 'x'.repeat(length);
      expect(encodeCommand('echo', [text]).equals(ioredisBytes('echo', [text]))).toBe(true);
    }
  });

  it('refuses an argument that is neither text nor bytes', () => {
    expect(() => encodeCommand('echo', [7])).toThrow(TypeError);
  });
});

// GLIDE and node-redis write their own commands; the property above covers the encoder, this the wire.
describe.skipIf(ON_GLIDE)('a lock whose name and prefix are not ASCII', () => {
  const f = useLockFixture();

  it.each(['zürich', 'ロック', 'lock 🔒 ✓', 'ǅ\u0301'])('%s is taken, seen, released and woken on', async (name) => {
    // Non-ASCII in the LockClient's prefix, in the connection's own keyPrefix and in the name.
    const options = { keyPrefix: `${f.prefix}·préfixe` };
    const locks = f.client(options, f.lockConnection({ keyPrefix: 'äpp:' }));
    const rival = f.client(options, f.lockConnection({ keyPrefix: 'äpp:' }));
    const lock = locks.getLock(name);
    expect(await lock.tryLock(0, 10_000)).toBe(true);
    // The hash is under the UTF-8 name Redis was told.
    expect(await f.keys()).toContain(`äpp:{${f.prefix}·préfixe:${name}}`);
    expect(await rival.getLock(name).isLocked()).toBe(true);
    expect(await rival.getLock(name).tryLock(0)).toBe(false);
    const waiting = rival.getLock(name).tryLock(5_000, 10_000);
    await lock.unlock();
    expect(await waiting).toBe(true);
    expect(await rival.getLock(name).forceUnlock()).toBe(true);
    expect(await lock.isLocked()).toBe(false);
  });
});
