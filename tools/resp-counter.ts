/** Where a complete top-level value ends in a chunk, and whether it is a RESP3 push that answers no command. */
export interface RespValueEnd {
  end: number;
  /**
   * A RESP3 push (`>`) that is no command's reply: a pub/sub message, an invalidation. The pushes
   * that confirm a (un)subscription answer their command, one per channel, so they count as replies.
   */
  push: boolean;
  /** The value's first element when it is an aggregate (a command's name, a push's kind), else ''. */
  head: string;
  /** Its second element when that is a string (a command's first key, a push's channel), else ''. */
  key: string;
}

/** The first element of the RESP3 pushes that confirm a (un)subscription: their command's reply. */
const CONFIRMATIONS = new Set(['subscribe', 'unsubscribe', 'psubscribe', 'punsubscribe', 'ssubscribe', 'sunsubscribe']);

/** RESP3 types that are one line: null, boolean, double, big number (RESP2's +, -, : too). */
const LINE_TYPES = new Set(['+', '-', ':', '_', '#', ',', '(']);
/** Types with a length and a payload: bulk string, blob error, verbatim string. */
const BULK_TYPES = new Set(['$', '!', '=']);
/** Aggregates and how many values each announced element stands for: maps hold pairs. */
const AGGREGATE_WIDTH: Record<string, number> = { '*': 1, '~': 1, '>': 1, '%': 2 };

/**
 * Counts complete RESP2 and RESP3 values in a byte stream fed chunk by chunk: every line type,
 * bulk strings (also null), aggregates (arrays, sets, maps, pushes; nested, empty, null).
 * ioredis 6 speaks RESP3 (`HELLO 3`) by default, so both must be framed. With `inline`, a line
 * that starts with no type byte is one inline command (`PING\r\n`), as Redis accepts from
 * clients. Only framing is parsed; payloads are skipped, never decoded.
 */
export class RespCounter {
  readonly #inline: boolean;
  /** The header line read so far, when it spans chunks. */
  #line = '';
  /** Payload bytes (with their CRLF) of the current bulk string still to skip. */
  #bulkLeft = 0;
  /** Elements still missing in each open aggregate, innermost last. */
  readonly #open: number[] = [];
  /** Whether the top-level value being read is a push. */
  #push = false;
  /** Elements of the top-level aggregate begun so far (the first two are captured). */
  #element = 0;
  /** Its first element (a bulk string: a command's name, a push's kind), read so far. */
  #head = '';
  /** Its second element (a command's first key), read so far. */
  #key = '';
  /** Which captured element the bulk string being skipped is: 1 (head), 2 (key) or 0 (neither). */
  #capturing = 0;

  constructor(options: { inline?: boolean } = {}) {
    this.#inline = options.inline ?? false;
  }

  /** Feeds one chunk; returns the offsets (exclusive ends) in it where a top-level value ends. */
  feed(chunk: Buffer): number[] {
    return this.feedValues(chunk).map((value) => value.end);
  }

  /** Feeds one chunk; returns each top-level value that ends in it, pushes marked. */
  feedValues(chunk: Buffer): RespValueEnd[] {
    const ends: RespValueEnd[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.#bulkLeft > 0) {
        const take = Math.min(this.#bulkLeft, chunk.length - at);
        if (this.#capturing === 1) this.#head += chunk.toString('latin1', at, at + take);
        else if (this.#capturing === 2) this.#key += chunk.toString('latin1', at, at + take);
        at += take;
        this.#bulkLeft -= take;
        if (this.#bulkLeft === 0) this.#valueDone(at, ends);
        continue;
      }
      const newline = chunk.indexOf(0x0a, at);
      if (newline === -1) {
        this.#line += chunk.toString('latin1', at);
        break;
      }
      const line = (this.#line + chunk.toString('latin1', at, newline)).replace(/\r$/, '');
      this.#line = '';
      at = newline + 1;
      this.#header(line, at, ends);
    }
    return ends;
  }

  #header(line: string, at: number, ends: RespValueEnd[]): void {
    const type = line[0] ?? '';
    const size = Number.parseInt(line.slice(1), 10);
    if (this.#open.length === 0) {
      this.#push = type === '>';
      this.#head = '';
      this.#key = '';
    }
    // An aggregate's first element says what it is; its second, what it is about.
    this.#capturing = 0;
    if (this.#open.length === 1) {
      this.#element += 1;
      if (this.#element <= 2 && BULK_TYPES.has(type)) this.#capturing = this.#element;
    }
    if (LINE_TYPES.has(type)) this.#valueDone(at, ends);
    else if (BULK_TYPES.has(type)) {
      if (size < 0) this.#valueDone(at, ends);
      else this.#bulkLeft = size + 2;
    } else if (type in AGGREGATE_WIDTH) {
      if (size <= 0) this.#valueDone(at, ends);
      else {
        if (this.#open.length === 0) this.#element = 0;
        this.#open.push(size * AGGREGATE_WIDTH[type]!);
      }
    } else if (this.#inline && this.#open.length === 0 && line.trim() !== '') {
      this.#head = `${line.trim().split(/\s+/)[0]}\r\n`;
      this.#valueDone(at, ends);
    } else if (line !== '') {
      throw new Error(`RespCounter: not RESP: ${JSON.stringify(line.slice(0, 40))}`);
    }
  }

  /** A value ended at `at`: it completes its array, maybe several nested ones, or is top-level. */
  #valueDone(at: number, ends: RespValueEnd[]): void {
    this.#capturing = 0;
    while (this.#open.length > 0) {
      const last = this.#open.length - 1;
      this.#open[last]! -= 1;
      if (this.#open[last]! > 0) return;
      this.#open.pop();
    }
    const head = this.#head.slice(0, -2);
    const key = this.#key.slice(0, -2);
    this.#head = '';
    this.#key = '';
    ends.push({ end: at, push: this.#push && !CONFIRMATIONS.has(head.toLowerCase()), head, key });
  }
}
