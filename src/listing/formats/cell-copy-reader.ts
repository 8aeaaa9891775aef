import type { ByteWriter } from './bytes.ts';
import { BINARY_HEADER, BINARY_SIGNATURE, type CopyReader } from './copy-out.ts';

/**
 * A reader of a binary `COPY` of an export's cells, a column per field, that writes each row in its format
 * (json-copy-reader.ts: NDJSON lines; xlsx-copy-reader.ts: sheet rows). PostgreSQL sends each row as one
 * CopyData message, the file header in the first row's message and the trailer in a message of its own: a row
 * lies whole in the socket's chunk, or its pieces are joined first. This class reads the messages; `row` writes
 * one row from its first field on.
 */
export abstract class CellCopyReader implements CopyReader {
  rows = 0;
  done = false;
  private header = true;
  /** The pieces of a message cut between chunks. */
  private parts: Buffer[] = [];

  /** `fields`: the cells of a row. */
  constructor(protected readonly fields: number) {}

  data(chunk: Buffer, start: number, end: number, last: boolean, out: ByteWriter): void {
    if (!last || this.parts.length > 0) {
      this.parts.push(Buffer.from(chunk.subarray(start, end)));
      if (!last) return;
      const whole = Buffer.concat(this.parts);
      this.parts = [];
      this.message(whole, 0, whole.length, out);
      return;
    }
    this.message(chunk, start, end, out);
  }

  /** One whole CopyData message: a row (the first one after the file header), or the trailer. */
  private message(src: Buffer, at: number, end: number, out: ByteWriter): void {
    if (this.done) throw new Error('COPY sent bytes after its trailer');
    if (this.header) {
      if (end - at < BINARY_HEADER || !src.subarray(at, at + BINARY_SIGNATURE.length).equals(BINARY_SIGNATURE)) throw new Error('not a binary COPY stream');
      at += BINARY_HEADER + src.readUInt32BE(at + BINARY_HEADER - 4);
      this.header = false;
    }
    if (end - at < 2) throw new Error('a COPY row cut short');
    const fields = src.readInt16BE(at);
    if (fields === -1) {
      this.done = true;
      return;
    }
    if (fields !== this.fields) throw new Error(`COPY row of ${fields} fields, expected ${this.fields}`);
    this.row(src, at + 2, end, out);
    this.rows += 1;
  }

  /**
   * Writes the row whose fields lie in `src[at, end)` (each a 32-bit length, -1 for null, and its bytes), all of
   * them and nothing after: a field that runs past `end`, or bytes left after the last, is an error.
   */
  protected abstract row(src: Buffer, at: number, end: number, out: ByteWriter): void;
}

/** The 32-bit length of the field at `src[at]` (-1 for null), its bytes checked to lie before `end`. */
export function fieldLength(src: Buffer, at: number, end: number): number {
  if (at + 4 > end) throw new Error('a COPY row cut short');
  const length = (src[at] << 24) | (src[at + 1] << 16) | (src[at + 2] << 8) | src[at + 3];
  if (at + 4 + length > end) throw new Error('a COPY row cut short');
  return length;
}

const TWO_32 = 4294967296;
/** `00` to `99` as ASCII, two bytes each. */
const PAIRS = Buffer.from(Array.from({ length: 100 }, (_v, i) => String(i).padStart(2, '0')).join(''), 'latin1');

/**
 * Writes the 64-bit integer at `src[at]` (the binary format's 8 bytes, big-endian) as `String` writes the number
 * node-pg makes of it (database.ts parses int8 with `Number`): `hi * 2^32 + lo` is that double (one rounding of
 * the exact sum), and `String` of it its digits below 2^53. Those below 2^31, nearly all, are written digit by
 * digit here: through `String` the NDJSON reader took 0.52 s for the 1.17 M product-parameter rows of three
 * integers each, this way 0.42 s, what their text cost it (a scratch loop over a captured `COPY`).
 */
export function writeInt8(src: Buffer, at: number, dst: Buffer, o: number): number {
  const hi = (src[at] << 24) | (src[at + 1] << 16) | (src[at + 2] << 8) | src[at + 3];
  const lo = (src[at + 4] << 24) | (src[at + 5] << 16) | (src[at + 6] << 8) | src[at + 7];
  // Most integers (ids, counts) are below 2^31: written in 32-bit arithmetic, whose division by 10 V8 makes a multiplication.
  if (hi === 0 && lo >= 0) return writeDigits(lo, dst, o);
  // Exact below 2^53 in magnitude; beyond, the nearest double, as `Number` of the digits gives.
  return writeAscii(String(hi * TWO_32 + (lo >>> 0)), dst, o);
}

/** Writes the digits of `v`, an integer from 0 to 2^31 - 1: two at a time, from the last. */
export function writeDigits(v: number, dst: Buffer, o: number): number {
  const stop = o + digitCount(v);
  let e = stop;
  while (v >= 100) {
    const q = (v / 100) | 0;
    const r = (v - q * 100) << 1;
    dst[--e] = PAIRS[r + 1];
    dst[--e] = PAIRS[r];
    v = q;
  }
  if (v >= 10) {
    dst[--e] = PAIRS[(v << 1) + 1];
    dst[--e] = PAIRS[v << 1];
  } else dst[--e] = 0x30 + v;
  return stop;
}

/** The digits of `v` (0 to 2^31 - 1). */
function digitCount(v: number): number {
  if (v < 100000) return v < 100 ? (v < 10 ? 1 : 2) : v < 1000 ? 3 : v < 10000 ? 4 : 5;
  return v < 10000000 ? (v < 1000000 ? 6 : 7) : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
}

/**
 * Whether PostgreSQL's text of a double (`src[at, stop)`, `float8out`) is what `String` writes of it. PostgreSQL
 * (12+) writes the shortest digits that read back as the same double, as JavaScript does, and in the same form
 * from 1e-4 up to 1e15, where it writes no exponent (pg-lines.ts, `jsNumber`). Not so: an exponent (beyond that
 * range, where JavaScript writes none or another), `-0`, NaN and ±Infinity.
 */
export function isJsFloat8Text(src: Buffer, at: number, stop: number): boolean {
  if (stop - at === 2 && src[at] === 0x2d && src[at + 1] === 0x30) return false;
  for (let k = at; k < stop; k++) {
    const c = src[k];
    // `e` of an exponent, `N` of NaN, `I` of Infinity.
    if (c === 0x65 || c === 0x4e || c === 0x49) return false;
  }
  return true;
}

/** Writes an ASCII text's characters as bytes. */
export function writeAscii(text: string, dst: Buffer, o: number): number {
  for (let k = 0; k < text.length; k++) dst[o++] = text.charCodeAt(k);
  return o;
}
