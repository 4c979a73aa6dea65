// A command in Redis' protocol (RESP: `*<count>`, then `$<length>` and the bytes of each part),
// written into one buffer. ioredis builds it by string concatenation: five intermediate strings
// per argument, flattened and encoded again when the socket writes it. Here each part is measured
// and copied once; ASCII text (nearly every argument rlock sends) byte by byte in JS, other text
// by Buffer.write. Parts are strings or Buffers.

const CR = 13;
const LF = 10;

/** Bytes of `text` in UTF-8; -1 marks it as ASCII-only so that its length is its byte count. */
function utf8Length(text: string): number {
  for (let i = 0; i < text.length; i += 1) {
    if (text.charCodeAt(i) > 127) return Buffer.byteLength(text);
  }
  return -1;
}

/** Decimal digits of a non-negative integer. */
function digitsOf(value: number): number {
  let digits = 1;
  while (value >= 10) {
    value = Math.floor(value / 10);
    digits += 1;
  }
  return digits;
}

/** Writes `prefix` (`*` or `$`), `value` in decimal and CRLF at `at`; returns the next offset. */
function writeHeader(out: Buffer, at: number, prefix: number, value: number): number {
  out[at] = prefix;
  const digits = digitsOf(value);
  for (let i = digits; i > 0; i -= 1) {
    out[at + i] = 48 + (value % 10);
    value = Math.floor(value / 10);
  }
  out[at + digits + 1] = CR;
  out[at + digits + 2] = LF;
  return at + digits + 3;
}

/** `name` and `args` as one RESP array of bulk strings. */
export function encodeCommand(name: string, args: readonly unknown[]): Buffer {
  const count = args.length + 1;
  // Byte lengths of the parts (name first); an ASCII string's is its length.
  const lengths = new Array<number>(count);
  let size = 1 + digitsOf(count) + 2;
  for (let i = 0; i < count; i += 1) {
    const part = i === 0 ? name : args[i - 1];
    let bytes: number;
    if (typeof part === 'string') {
      const utf8 = utf8Length(part);
      bytes = utf8 === -1 ? part.length : utf8;
      lengths[i] = utf8 === -1 ? -1 - bytes : bytes;
    } else if (Buffer.isBuffer(part)) {
      bytes = part.length;
      lengths[i] = bytes;
    } else {
      throw new TypeError(`a command argument must be a string or a Buffer, not ${typeof part}`);
    }
    size += 1 + digitsOf(bytes) + 2 + bytes + 2;
  }
  const out = Buffer.allocUnsafe(size);
  let at = writeHeader(out, 0, 42, count);
  for (let i = 0; i < count; i += 1) {
    const part = (i === 0 ? name : args[i - 1]) as string | Buffer;
    const stored = lengths[i]!;
    const ascii = stored < 0;
    const bytes = ascii ? -1 - stored : stored;
    at = writeHeader(out, at, 36, bytes);
    if (typeof part !== 'string') part.copy(out, at);
    else if (ascii) for (let c = 0; c < bytes; c += 1) out[at + c] = part.charCodeAt(c);
    else out.write(part, at, 'utf8');
    at += bytes;
    out[at] = CR;
    out[at + 1] = LF;
    at += 2;
  }
  return out;
}
