import { describe, expect, it } from 'vitest';
import { sleep, until } from '../helpers/fixtures.js';
import { useFaultRig } from '../helpers/fault-rig.js';
import { RespCounter } from '../../tools/resp-counter.js';

/** Feeds `text` to a counter one byte at a time: every split point is exercised. */
function countBytewise(text: string, inline = false): number {
  const counter = new RespCounter({ inline });
  let values = 0;
  for (const byte of Buffer.from(text)) values += counter.feed(Buffer.from([byte])).length;
  return values;
}

describe('RespCounter', () => {
  it('counts complete values of every RESP2 type, across chunk boundaries', () => {
    const replies = '+OK\r\n-ERR no\r\n:42\r\n$5\r\nhe\r\no\r\n$-1\r\n*-1\r\n*0\r\n*2\r\n*2\r\n:1\r\n$0\r\n\r\n+x\r\n';
    expect(countBytewise(replies)).toBe(8);
    expect(new RespCounter().feed(Buffer.from(replies))).toHaveLength(8);
  });

  it('counts RESP3 values (ioredis 6 sends HELLO 3) and marks pushes', () => {
    const replies =
      '%2\r\n+server\r\n$5\r\nredis\r\n+proto\r\n:3\r\n_\r\n#t\r\n,1.5\r\n(12345\r\n' +
      '!3\r\nERR\r\n=7\r\ntxt:abc\r\n~2\r\n:1\r\n:2\r\n%0\r\n>3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n';
    expect(countBytewise(replies)).toBe(10);
    const values = new RespCounter().feedValues(Buffer.from(replies));
    expect(values.map((value) => value.push)).toEqual([...Array<boolean>(9).fill(false), true]);
  });

  it('names each value by its first element: a command, inline or not, or a push', () => {
    const heads = new RespCounter({ inline: true }).feedValues(Buffer.from('*2\r\n$4\r\nINCR\r\n$1\r\nk\r\nPING\r\n+OK\r\n'));
    expect(heads.map((value) => value.head)).toEqual(['INCR', 'PING', '']);
  });

  it('gives a command’s first key, also when split byte by byte, and nothing for a nested value', () => {
    const commands = '*3\r\n$3\r\nDEL\r\n$5\r\nab:cd\r\n$1\r\nx\r\n*2\r\n$4\r\nEXEC\r\n*1\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n';
    const keys = (chunks: Buffer[]): string[] => {
      const counter = new RespCounter();
      return chunks.flatMap((chunk) => counter.feedValues(chunk).map((value) => `${value.head} ${value.key}`));
    };
    expect(keys([Buffer.from(commands)])).toEqual(['DEL ab:cd', 'EXEC ', 'PING ']);
    expect(keys([...Buffer.from(commands)].map((byte) => Buffer.from([byte])))).toEqual(['DEL ab:cd', 'EXEC ', 'PING ']);
  });

  it('counts the RESP3 pushes that confirm a subscription as replies, not as messages', () => {
    const replies = '>3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n>3\r\n$8\r\nsmessage\r\n$1\r\nc\r\n$1\r\nm\r\n>3\r\n$11\r\nunsubscribe\r\n$1\r\nc\r\n:0\r\n';
    const marks = (counter: RespCounter, chunks: Buffer[]): boolean[] => chunks.flatMap((chunk) => counter.feedValues(chunk).map((value) => value.push));
    expect(marks(new RespCounter(), [Buffer.from(replies)])).toEqual([false, true, false]);
    // Split inside the kind: still read whole.
    expect(marks(new RespCounter(), [...Buffer.from(replies)].map((byte) => Buffer.from([byte])))).toEqual([false, true, false]);
  });

  it('gives the offset where each value ends, and waits for incomplete ones', () => {
    const counter = new RespCounter();
    expect(counter.feed(Buffer.from('*2\r\n$3\r\nfoo\r\n:1\r\n$3\r\nb'))).toEqual([17]);
    expect(counter.feed(Buffer.from('ar\r\n'))).toEqual([4]);
  });

  it('counts inline commands only where asked to', () => {
    expect(countBytewise('PING\r\n*1\r\n$4\r\nPING\r\n', true)).toBe(2);
    expect(() => new RespCounter().feed(Buffer.from('PING\r\n'))).toThrow(/not RESP/);
  });
});

describe('fault proxy', () => {
  const rig = useFaultRig();

  it('passes traffic through, and latency delays each direction', async () => {
    const redis = rig.connect('proxy');
    expect(await redis.ping()).toBe('PONG');
    expect(rig.proxy.connections).toBe(1);
    rig.proxy.latency({ up: 150, down: 100 });
    const started = performance.now();
    await redis.set(`${rig.prefix}:k`, 'v');
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    expect(await rig.admin.get(`${rig.prefix}:k`)).toBe('v');
    rig.proxy.latency({});
    const again = performance.now();
    await redis.ping();
    expect(performance.now() - again).toBeLessThan(100);
  });

  it('blackhole holds bytes both ways until heal delivers them', async () => {
    const redis = rig.connect('proxy');
    await redis.ping();
    rig.proxy.blackhole();
    let answered = false;
    const set = redis.set(`${rig.prefix}:held`, 'v').then(() => (answered = true));
    await sleep(300);
    expect(await rig.admin.get(`${rig.prefix}:held`)).toBeNull();
    expect(answered).toBe(false);
    // New connections are held too.
    const late = rig.connect('proxy');
    const latePing = late.ping();
    await sleep(200);
    expect(late.status).not.toBe('ready');
    rig.proxy.heal();
    await set;
    expect(await rig.admin.get(`${rig.prefix}:held`)).toBe('v');
    expect(await latePing).toBe('PONG');
  });

  it('blackhole with drop discards bytes; resetAll then lets ioredis reconnect', async () => {
    const redis = rig.connect('proxy', { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });
    await redis.ping();
    rig.proxy.blackhole({ drop: true });
    const set = redis.set(`${rig.prefix}:dropped`, 'v').catch((error: unknown) => error);
    await sleep(300);
    rig.proxy.resetAll();
    rig.proxy.heal();
    expect(await set).toBeInstanceOf(Error);
    expect(await rig.admin.get(`${rig.prefix}:dropped`)).toBeNull();
    expect(await redis.ping()).toBe('PONG');
  });

  it('swallowReplies makes ioredis resend a call Redis already ran', async () => {
    const redis = rig.connect('proxy');
    await redis.ping();
    rig.proxy.swallowReplies(1);
    expect(await redis.incr(`${rig.prefix}:n`)).toBe(2);
    expect(await rig.admin.get(`${rig.prefix}:n`)).toBe('2');
  });

  it('swallowReplies lets replies to earlier calls pass, and swallows the next n', async () => {
    const redis = rig.connect('proxy');
    await redis.ping();
    // Hold the first INCR's reply, so it is still unanswered when the proxy is armed.
    rig.proxy.latency({ down: 300 });
    const first = redis.incr(`${rig.prefix}:a`);
    await until(async () => (await rig.admin.get(`${rig.prefix}:a`)) === '1');
    rig.proxy.latency({});
    rig.proxy.swallowReplies(2);
    const second = redis.incr(`${rig.prefix}:b`);
    const third = redis.incr(`${rig.prefix}:c`);
    expect(await first).toBe(1);
    expect([await second, await third]).toEqual([2, 2]);
  });

  it('swallowReplies neither counts nor swallows housekeeping commands (PING, CONFIG GET, …)', async () => {
    const redis = rig.connect('proxy');
    await redis.ping();
    rig.proxy.swallowReplies(1);
    expect(await redis.ping()).toBe('PONG');
    expect(await redis.config('GET', 'maxmemory-policy')).toHaveLength(2);
    // The call under test: run, its reply swallowed, the socket reset, and run again.
    expect(await redis.incr(`${rig.prefix}:h`)).toBe(2);
  });

  it('after a swallowed reply nothing reaches the client until the reset: a PING sent meanwhile is not taken for the lost reply', async () => {
    const redis = rig.connect('proxy');
    await redis.ping();
    rig.proxy.swallowReplies(2);
    const first = redis.incr(`${rig.prefix}:p1`);
    await until(async () => (await rig.admin.get(`${rig.prefix}:p1`)) === '1');
    let pong: unknown;
    const ping = redis.ping().then((reply) => (pong = reply));
    await sleep(150);
    expect(pong, 'the PING is not answered while a reply before it is lost').toBeUndefined();
    const second = redis.incr(`${rig.prefix}:p2`);
    // Both run, both replies lost, the socket reset; ioredis resends all three, in order.
    expect(await first).toBe(2);
    expect(await ping).toBe('PONG');
    expect(await second).toBe(2);
  });

  it('endSwallows resets a connection whose swallow is under way (one of n caught), and drops an armed one', async () => {
    const redis = rig.connect('proxy');
    await redis.ping();
    rig.proxy.swallowReplies(2);
    const incr = redis.incr(`${rig.prefix}:e`);
    await until(async () => (await rig.admin.get(`${rig.prefix}:e`)) === '1');
    rig.proxy.endSwallows();
    expect(await incr, 'reset, then resent').toBe(2);
    rig.proxy.swallowReplies(1);
    rig.proxy.endSwallows();
    expect(await redis.incr(`${rig.prefix}:e`), 'nothing armed any more').toBe(3);
  });

  it('swallowReplies with thenBlackhole holds the resend until heal', async () => {
    const redis = rig.connect('proxy');
    await redis.ping();
    rig.proxy.swallowReplies(1, { thenBlackhole: true });
    const incr = redis.incr(`${rig.prefix}:n`);
    await until(() => rig.proxy.blackholed);
    await sleep(300);
    expect(await rig.admin.get(`${rig.prefix}:n`)).toBe('1');
    rig.proxy.heal();
    expect(await incr).toBe(2);
  });

  it('swallowReplies can pick the connection', async () => {
    const first = rig.connect('proxy');
    await first.ping();
    const second = rig.connect('proxy');
    await second.ping();
    rig.proxy.swallowReplies(1, { connection: 1 });
    expect(await first.incr(`${rig.prefix}:first`)).toBe(1);
    expect(await second.incr(`${rig.prefix}:second`)).toBe(2);
  });

  it('resetAll resets every connection, and ioredis reconnects', async () => {
    const a = rig.connect('proxy');
    const b = rig.connect('proxy');
    await Promise.all([a.ping(), b.ping()]);
    expect(rig.proxy.connections).toBe(2);
    let closes = 0;
    a.on('close', () => (closes += 1));
    b.on('close', () => (closes += 1));
    rig.proxy.resetAll();
    await until(() => closes === 2);
    expect(await a.ping()).toBe('PONG');
    expect(await b.ping()).toBe('PONG');
    expect(rig.proxy.connections).toBe(2);
  });
});
