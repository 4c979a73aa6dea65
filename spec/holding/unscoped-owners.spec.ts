import { describe, expect, it } from 'vitest';
import { Holds } from '../../lib/holding/holds.js';

// A hold taken outside any lock context is found by `unlock()` through its lock's list of
// unscoped owners. A list that empties stays for the lock's next call (made and dropped on every
// cycle, it cost a map insertion and deletion each time), up to 256 empty lists.

const newHolds = (): Holds => new Holds({ lost: () => undefined }, 'spec');

describe('the lists of unscoped owners', () => {
  it('keep the latest owner last, and give each back once', () => {
    const holds = newHolds();
    holds.rememberUnscoped('lock\0a', 'c:1');
    holds.rememberUnscoped('lock\0a', 'c:2');
    holds.rememberUnscoped('lock\0a', 'c:2');
    expect(holds.latestUnscoped('lock\0a')).toBe('c:2');
    expect(holds.takeUnscoped('lock\0a')).toBe('c:2');
    expect(holds.takeUnscoped('lock\0a')).toBe('c:1');
    expect(holds.takeUnscoped('lock\0a')).toBeUndefined();
    expect(holds.latestUnscoped('lock\0a')).toBeUndefined();
    // The emptied list serves the next hold.
    holds.rememberUnscoped('lock\0a', 'c:3');
    expect(holds.takeUnscoped('lock\0a')).toBe('c:3');
  });

  it('cost nothing for long once a thousand lock names were each used once', () => {
    const holds = newHolds();
    holds.rememberUnscoped('lock\0kept', 'c:kept');
    for (let at = 0; at < 1_000; at += 1) {
      holds.rememberUnscoped(`lock\0name-${at}`, `c:${at}`);
      if (at % 2 === 0) expect(holds.takeUnscoped(`lock\0name-${at}`)).toBe(`c:${at}`);
      else holds.forgetUnscoped(`lock\0name-${at}`, `c:${at}`);
    }
    // At most 256 empty lists, and the one still holding an owner.
    expect(holds.unscopedLists).toBeLessThanOrEqual(257);
    expect(holds.latestUnscoped('lock\0kept')).toBe('c:kept');
    expect(holds.takeUnscoped('lock\0kept')).toBe('c:kept');
  });

  it('count a list filled again as no longer empty', () => {
    const holds = newHolds();
    // One lock emptied and filled a thousand times: it never counts as more than one empty list.
    for (let at = 0; at < 1_000; at += 1) {
      holds.rememberUnscoped('lock\0loop', `c:${at}`);
      holds.takeUnscoped('lock\0loop');
    }
    for (let at = 0; at < 256; at += 1) {
      holds.rememberUnscoped(`lock\0other-${at}`, 'c:x');
      holds.takeUnscoped(`lock\0other-${at}`);
    }
    // 257 empty lists now (the loop's and 256 others), one past the bound: all were dropped then.
    expect(holds.unscopedLists).toBe(0);
  });
});
