import { describe, expect, it } from 'vitest';
import { UnscopedOwners } from '../../lib/holding/unscoped-owners.js';

// A hold taken outside any lock context is found by `unlock()` through its lock's list of
// unscoped owners. A list that empties stays for the lock's next call (made and dropped on every
// cycle, it cost a map insertion and deletion each time), up to 256 empty lists.

const newLists = (): UnscopedOwners => new UnscopedOwners();

describe('the lists of unscoped owners', () => {
  it('keep the latest owner last, and give each back once', () => {
    const holds = newLists();
    holds.remember('lock\0a', 'c:1');
    holds.remember('lock\0a', 'c:2');
    holds.remember('lock\0a', 'c:2');
    expect(holds.latest('lock\0a')).toBe('c:2');
    expect(holds.take('lock\0a')).toBe('c:2');
    expect(holds.take('lock\0a')).toBe('c:1');
    expect(holds.take('lock\0a')).toBeUndefined();
    expect(holds.latest('lock\0a')).toBeUndefined();
    // The emptied list serves the next hold.
    holds.remember('lock\0a', 'c:3');
    expect(holds.take('lock\0a')).toBe('c:3');
  });

  it('cost nothing for long once a thousand lock names were each used once', () => {
    const holds = newLists();
    holds.remember('lock\0kept', 'c:kept');
    for (let at = 0; at < 1_000; at += 1) {
      holds.remember(`lock\0name-${at}`, `c:${at}`);
      if (at % 2 === 0) expect(holds.take(`lock\0name-${at}`)).toBe(`c:${at}`);
      else holds.forget(`lock\0name-${at}`, `c:${at}`);
    }
    // At most 256 empty lists, and the one still holding an owner.
    expect(holds.lists).toBeLessThanOrEqual(257);
    expect(holds.latest('lock\0kept')).toBe('c:kept');
    expect(holds.take('lock\0kept')).toBe('c:kept');
  });

  it('count a list filled again as no longer empty', () => {
    const holds = newLists();
    // One lock emptied and filled a thousand times: it never counts as more than one empty list.
    for (let at = 0; at < 1_000; at += 1) {
      holds.remember('lock\0loop', `c:${at}`);
      holds.take('lock\0loop');
    }
    for (let at = 0; at < 256; at += 1) {
      holds.remember(`lock\0other-${at}`, 'c:x');
      holds.take(`lock\0other-${at}`);
    }
    // 257 empty lists now (the loop's and 256 others), one past the bound: all were dropped then.
    expect(holds.lists).toBe(0);
  });
});
