/**
 * Counts complete RESP2 values in a byte stream fed chunk by chunk: simple strings, errors,
 * integers, bulk strings (also null), arrays (nested, empty, null). With `inline`, a line that
 * starts with no type byte is one inline command (`PING\r\n`), as Redis accepts from clients.
 * Only framing is parsed; payloads are skipped, never decoded.
 */
export class RespCounter {
  readonly #inline: boolean;
  /** The header line read so far, when it spans chunks. */
  #line = '';
  /** Payload bytes (with their CRLF) of the current bulk string still to skip. */
  #bulkLeft = 0;
  /** Elements still missing in each open array, innermost last. */
  readonly #open: number[] = [];

  constructor(options: { inline?: boolean } = {}) {
    this.#inline = options.inline ?? false;
  }

  /** Feeds one chunk; returns the offsets (exclusive ends) in it where a top-level value ends. */
  feed(chunk: Buffer): number[] {
    const ends: number[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.#bulkLeft > 0) {
        const take = Math.min(this.#bulkLeft, chunk.length - at);
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

  #header(line: string, at: number, ends: number[]): void {
    const type = line[0];
    const size = Number.parseInt(line.slice(1), 10);
    if (type === '+' || type === '-' || type === ':') this.#valueDone(at, ends);
    else if (type === '$') {
      if (size < 0) this.#valueDone(at, ends);
      else this.#bulkLeft = size + 2;
    } else if (type === '*') {
      if (size <= 0) this.#valueDone(at, ends);
      else this.#open.push(size);
    } else if (this.#inline && this.#open.length === 0 && line.trim() !== '') {
      this.#valueDone(at, ends);
    } else if (line !== '') {
      throw new Error(`RespCounter: not RESP2: ${JSON.stringify(line.slice(0, 40))}`);
    }
  }

  /** A value ended at `at`: it completes its array, maybe several nested ones, or is top-level. */
  #valueDone(at: number, ends: number[]): void {
    while (this.#open.length > 0) {
      const last = this.#open.length - 1;
      this.#open[last]! -= 1;
      if (this.#open[last]! > 0) return;
      this.#open.pop();
    }
    ends.push(at);
  }
}
