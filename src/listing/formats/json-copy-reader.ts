import type { ByteWriter } from './bytes.ts';
import { CellCopyReader, fieldLength, isJsFloat8Text, writeAscii, writeInt8 } from './cell-copy-reader.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** The escapes JSON.stringify writes by name; the other control characters it writes as `\u00xx`. */
const NAMED: Record<number, number> = { 0x08: 0x62, 0x09: 0x74, 0x0a: 0x6e, 0x0c: 0x66, 0x0d: 0x72 };
/** Per byte: the second byte of its escape (`\"`, `\\`, `\n`), 0x75 (`u`) for `\u00xx`, or 0 if written as it is. */
const ESCAPE = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) ESCAPE[c] = NAMED[c] ?? 0x75;
ESCAPE[QUOTE] = QUOTE;
ESCAPE[BACKSLASH] = BACKSLASH;
/** The most bytes one byte of a text becomes (`\u00xx`). */
const MOST = 6;
/** The most bytes a number becomes: `String(x)` of a double is at most 24 characters (`-1.2345678901234567e-308`). */
const NUMBER_MOST = 24;

/**
 * How a field comes and is written: a text (its UTF-8 bytes, quoted and escaped); a 64-bit integer (the binary
 * format's 8 bytes, big-endian); a double as PostgreSQL's text of it (`float8out`). Numbers are written as
 * JSON.stringify writes the number node-pg would have made of the value.
 */
export const CellKind = { Text: 0, Int8: 1, Float8Text: 2 } as const;
export type CellKind = (typeof CellKind)[keyof typeof CellKind];

/**
 * Reads a binary `COPY` of an NDJSON export's cells, a column per field (pg-lines.ts, `pgJsonCells`), and writes
 * each row's line as JSON.stringify writes the item: `{"name":value,…}` and LF; a text's bytes between quotes
 * with `"`, `\` and control characters escaped as JSON.stringify escapes them, a number as `String` writes it
 * (null where it is not finite), a null as `null`. PostgreSQL sends text as its UTF-8 bytes (a UTF-8 database
 * holds no NUL and no invalid sequence), which JSON.stringify writes unchanged but for those escapes.
 *
 * Integers come in the binary format's 8 bytes rather than as text: PostgreSQL's `::text` of three integers per row
 * was about a sixth of its `COPY` of the 1.17 M product-parameter values (1.2-1.4 s against 1.05-1.15 s through
 * psql), and their digits cost this loop less than their text did (below, at `writeInt8`). Doubles come as text,
 * which is JavaScript's own but for a few forms this reader tells apart (`writeFloat8Text`), so that no row needs
 * checking first. Sent as their 8 bytes instead, `String` of each cost this loop about 0.1 µs (the NDJSON of
 * products cost the server 1.16× its CPU side by side), which their text costs PostgreSQL alone.
 *
 * Why not JSON lines built by PostgreSQL (as these were until the eighth session, and as pg-nested-lines.ts still
 * builds an order's): a JSON text per row costs PostgreSQL more than twice what its CSV costs, and an export
 * waited for the database; the cells cost it what a CSV does, and this loop costs Node less (about 0.35 µs a row)
 * than it saves there. Over HTTP, exports of 20 000 products ran about 1.4× as often (docs/benchmarks.md, "Exports").
 */
export class JsonCopyReader extends CellCopyReader {
  private readonly first: Uint8Array[];
  private readonly next: Uint8Array[];
  /** The bytes of the names and punctuation of a line: `{"a":`, `,"b":`, the quotes of quoted values, `}` and LF. */
  private readonly fixed: number;

  /** `names`: the item's keys in order; `kinds[i]`: how the field's value comes. */
  constructor(
    names: string[],
    private readonly kinds: CellKind[],
  ) {
    super(kinds.length);
    this.first = names.map((n) => Buffer.from(`{${JSON.stringify(n)}:`));
    this.next = names.map((n) => Buffer.from(`,${JSON.stringify(n)}:`));
    this.fixed = this.next.reduce((sum, b) => sum + b.length + 2, 1 + 2);
  }

  protected row(src: Buffer, at: number, end: number, out: ByteWriter): void {
    const n = this.kinds.length;
    // What the line can come to: every byte of a value escaped as `\u00xx` (a number's 8 bytes as 48, more than
    // its longest text). A long row is counted instead, so that it does not hold a buffer six times its size.
    let room = this.fixed + (end - at) * MOST;
    if (room > 1 << 16) room = this.size(src, at, end);
    const dst = out.room(room);
    let o = out.position;
    for (let i = 0; i < n; i++) {
      const name = i === 0 ? this.first[i] : this.next[i];
      // Copied by TypedArray's set, and a text's plain bytes told apart before the escape table below: the
      // reader's 1.17 M product-parameter rows in 0.55 s against 0.59 s (a scratch loop over a captured COPY).
      dst.set(name, o);
      o += name.length;
      const length = fieldLength(src, at, end);
      at += 4;
      if (length < 0) {
        // null
        dst[o++] = 0x6e;
        dst[o++] = 0x75;
        dst[o++] = 0x6c;
        dst[o++] = 0x6c;
        continue;
      }
      const stop = at + length;
      const kind = this.kinds[i];
      if (kind === CellKind.Int8) {
        if (length !== 8) throw new Error(`a COPY integer of ${length} bytes, expected 8`);
        o = writeInt8(src, at, dst, o);
        at = stop;
        continue;
      }
      if (kind === CellKind.Float8Text) {
        o = writeFloat8Text(src, at, stop, dst, o);
        at = stop;
        continue;
      }
      dst[o++] = QUOTE;
      while (at < stop) {
        const c = src[at++];
        if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
          dst[o++] = c;
          continue;
        }
        const e = ESCAPE[c];
        if (e !== 0x75) {
          dst[o++] = BACKSLASH;
          dst[o++] = e;
        } else {
          dst[o++] = BACKSLASH;
          dst[o++] = 0x75;
          dst[o++] = 0x30;
          dst[o++] = 0x30;
          dst[o++] = HEX[c >> 4];
          dst[o++] = HEX[c & 15];
        }
      }
      dst[o++] = QUOTE;
    }
    if (at !== end) throw new Error('a COPY row longer than its fields');
    dst[o++] = 0x7d;
    dst[o++] = 0x0a;
    out.advance(o);
  }

  /** The bytes of the line of the row whose fields start at `at`: exact for texts, numbers at their longest. */
  private size(src: Buffer, at: number, end: number): number {
    let size = this.fixed;
    for (let i = 0; i < this.kinds.length && at + 4 <= end; i++) {
      const length = src.readInt32BE(at);
      at += 4;
      if (length < 0) {
        size += 4;
        continue;
      }
      const stop = Math.min(end, at + length);
      if (this.kinds[i] !== CellKind.Text) size += NUMBER_MOST;
      else for (; at < stop; at++) size += ESCAPE[src[at]] === 0 ? 1 : ESCAPE[src[at]] === 0x75 ? MOST : 2;
      at = stop;
    }
    return size;
  }
}

/**
 * Writes PostgreSQL's text of a double (`src[at, stop)`) as JSON.stringify writes the double. PostgreSQL (12+) writes
 * the shortest digits that read back as the same double, as JavaScript does, and in the same form from 1e-4 up to
 * 1e15, where it writes no exponent (pg-lines.ts, `jsNumber`): such a text is copied as it is. An exponent (beyond
 * that range, where JavaScript writes none or another), `-0`, NaN and ±Infinity are read back into the double and
 * written by `String`, or as null where JSON has no form for it.
 */
function writeFloat8Text(src: Buffer, at: number, stop: number, dst: Buffer, o: number): number {
  if (isJsFloat8Text(src, at, stop)) {
    while (at < stop) dst[o++] = src[at++];
    return o;
  }
  const x = Number(src.toString('latin1', at, stop));
  return writeAscii(Number.isFinite(x) ? String(x) : 'null', dst, o);
}
