import { describe, expect, it } from 'vitest';
import { REQUEST_SPAN, RequestWindow, type CallRequest, type HeldRequest } from '../../lib/scripts/request-window.js';

// The client's side of the resend records (request-window.lua): what each request tells Redis.
describe('request window', () => {
  const OWNER = 'me:1';
  /** A call sent once, settled when `answer()` is called; `owner` null: a call of the client's own records. */
  const call = (window: RequestWindow, key = 'k', owner: string | null = OWNER) => {
    let answer: () => void = () => undefined;
    let request: CallRequest | undefined;
    const sent = window.send(key, owner ?? undefined, (r) => {
      request = r;
      r.sending();
      return new Promise<string>((resolve) => {
        answer = () => {
          r.settled();
          resolve(r.id);
        };
      });
    });
    return { sent, id: () => request?.id, answer: () => answer() };
  };

  it('numbers calls per key, with the gap down to the oldest call in use', () => {
    const window = new RequestWindow('me');
    const a = call(window);
    const b = call(window);
    const c = call(window);
    expect([a.id(), b.id(), c.id()]).toEqual(['1/0', '2/1', '3/2']);
    b.answer();
    // Call 1 is still in use: the gap still reaches it.
    expect(call(window).id()).toBe('4/3');
    a.answer();
    // 1 and 2 are answered: 3 is the oldest in use.
    expect(call(window).id()).toBe('5/2');
  });

  it('never repeats a number on a key, also after its window was idle', async () => {
    const window = new RequestWindow('me');
    const first = call(window, 'k');
    const other = call(window, 'other');
    first.answer();
    other.answer();
    await Promise.all([first.sent, other.sent]);
    // 'k' is idle and forgotten; its next number is above every number this client gave.
    expect(call(window, 'k').id()).toBe('3/0');
  });

  it('tags the calls for another client\'s owner, and those of its own records (no owner)', () => {
    const window = new RequestWindow('me');
    expect(call(window, 'k', 'other:1').id()).toBe('me:1/0');
    expect(call(window, 'k', null).id()).toBe('me:2/1');
    expect(call(window, 'k', 'me:2').id()).toBe('3/2');
  });

  it(`lets ${REQUEST_SPAN} calls be in use on a key; the next waits for the oldest, in order`, async () => {
    const window = new RequestWindow('me');
    const calls = Array.from({ length: REQUEST_SPAN + 2 }, () => call(window));
    expect(calls[REQUEST_SPAN - 1]!.id()).toBe(`${REQUEST_SPAN.toString(36)}/${(REQUEST_SPAN - 1).toString(36)}`);
    expect(calls[REQUEST_SPAN]!.id()).toBeUndefined();
    // Another key has room of its own.
    expect(call(window, 'other').id()).toBeDefined();
    // A later call answered first frees nothing: the oldest is still in use.
    calls[1]!.answer();
    await Promise.resolve();
    expect(calls[REQUEST_SPAN]!.id()).toBeUndefined();
    calls[0]!.answer();
    await new Promise((resolve) => setImmediate(resolve));
    // 0 and 1 answered: both waiting calls start, and their gap reaches call 3 (number 3).
    expect(calls[REQUEST_SPAN]!.id()).toBe(`${(REQUEST_SPAN + 1).toString(36)}/${(REQUEST_SPAN - 2).toString(36)}`);
    expect(calls[REQUEST_SPAN + 1]!.id()).toBe(`${(REQUEST_SPAN + 2).toString(36)}/${(REQUEST_SPAN - 1).toString(36)}`);
  });

  it('a held request stays in use across its sends until its caller is done', async () => {
    const window = new RequestWindow('me');
    const held: HeldRequest & { done: boolean } = { request: undefined, done: false };
    const send = (): Promise<string> =>
      window.send(
        'k',
        OWNER,
        (r) => {
          r.sending();
          r.settled();
          return Promise.resolve(r.id);
        },
        held,
      );
    expect(await send()).toBe('1/0');
    expect(await send()).toBe('1/0');
    // Still in use: a later call's gap reaches it.
    expect(call(window).id()).toBe('2/1');
    held.done = true;
    held.request!.close();
    expect(call(window).id()).toBe('3/1');
  });
});
