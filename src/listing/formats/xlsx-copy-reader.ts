import type { ByteWriter } from './bytes.ts';
import { CellCopyReader, fieldLength, isJsFloat8Text, writeAscii, writeDigits, writeInt8 } from './cell-copy-reader.ts';
import { columnLetters, excelSerial, MAX_CELL_TEXT, MAX_SHEET_ROWS, TEXT_CLOSE, TEXT_OPEN, TEXT_PRESERVED, textTail, XLSX_STYLES } from './xlsx-xml.ts';

/**
 * How a cell of an XLSX export comes (pg-lines.ts, `pgXlsxCells`) and is written: an integer in the binary
 * format's 8 bytes; a number or an amount of money as PostgreSQL's text of the double (money with its number
 * format); a date-time or a text as its UTF-8 bytes (a date-time written as a serial date where XlsxExportWriter's
 * `Date.parse` reads one).
 */
export const XlsxKind = { Int8: 0, Number: 1, Money: 2, Date: 3, Text: 4 } as const;
export type XlsxKind = (typeof XlsxKind)[keyof typeof XlsxKind];

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
const ROW_OPEN = ascii('<row r="');
const ROW_TAIL = ascii('">');
const ROW_CLOSE = ascii('</row>');
/** After a number cell's row number, by kind (a text's is TEXT_OPEN or TEXT_PRESERVED). */
const VALUE_OPEN: Record<Exclude<XlsxKind, typeof XlsxKind.Text>, Buffer> = {
  [XlsxKind.Int8]: ascii('"><v>'),
  [XlsxKind.Number]: ascii('"><v>'),
  [XlsxKind.Money]: ascii(`" s="${XLSX_STYLES.money}"><v>`),
  [XlsxKind.Date]: ascii(`" s="${XLSX_STYLES.date}"><v>`),
};
const VALUE_CLOSE = ascii('</v></c>');
const TEXT_OPEN_BYTES = ascii(TEXT_OPEN);
const TEXT_PRESERVED_BYTES = ascii(TEXT_PRESERVED);
const TEXT_CLOSE_BYTES = ascii(TEXT_CLOSE);

/**
 * Bytes a text cell holds as they are: anything but what XML escapes (`&`, `<`, `>`, CR), control characters it
 * cannot hold (tab and LF it can), and 0xEF, the first byte of U+FFFE and U+FFFF (which it cannot hold either)
 * and of other characters from U+F000 on. A text with any other byte is written through `textTail`.
 */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 0x100; c++) PLAIN[c] = 1;
for (const c of [0x26, 0x3c, 0x3e, 0xef]) PLAIN[c] = 0;
PLAIN[0x09] = 1;
PLAIN[0x0a] = 1;

/** The most bytes a cell's XML comes to beside its value's bytes (a non-finite number written as a text cell is the longest). */
const CELL_MOST = 96;
/** The most bytes one byte of a text becomes (`&` as `&amp;`). */
const TEXT_MOST = 5;

/**
 * Reads a binary `COPY` of an XLSX export's cells (pg-lines.ts, `pgXlsxCells`) and writes each row as the sheet
 * XML XlsxExportWriter renders of the same row read by node-pg: the same bytes (pg-lines.test.ts holds the two
 * to that), without a JavaScript value per cell. Rows are numbered from 2 (the header is row 1); once a sheet
 * holds `sheetRows` rows, the next row begins a new sheet, which the writer is told through `takeBreaks`.
 *
 * Why: XlsxExportWriter's rows cost Node about 0.8 s of main thread per 100 000 products, a third of it in
 * node-pg's parsing of the rows into values, a third in the cells' strings and their encoding into bytes
 * (docs/benchmarks.md, "Exports"); the XLSX of products took 3.9 times the time of the API's own CSV. Orders'
 * items come in one cell per order (pg-nested-lines.ts, `pgNestedXlsxCells`), a sheet row each.
 */
export class XlsxCopyReader extends CellCopyReader {
  /** `<c r="` and its column's letters, for the row's own cells, then for an element's. */
  private readonly opens: Buffer[];
  private readonly itemOpens: Buffer[];
  private readonly fixed: number;
  private rowInSheet = 1;
  private breaks: number[] = [];
  /** The current row's number as ASCII digits, and how many. */
  private readonly num = Buffer.alloc(16);
  private numLength = 0;
  /** Where the cells last written (`cells`) ended in their source. */
  private read = 0;
  /**
   * The last date-time in the API's form, and its cell after the row number: a row's `updatedAt` is often its
   * `createdAt`, and `String` of a serial date costs about 0.25 µs.
   */
  private readonly lastDate = Buffer.alloc(ISO_LENGTH);
  private readonly lastDateCell = Buffer.alloc(64);
  private lastDateCellLength = 0;

  /**
   * `kinds`: the row's cells. `itemKinds`: those of the elements of an exploded nested array (orders' items), which
   * come in one last cell, each element's fields in turn framed as a row's are: each element is a sheet row of the
   * row's own cells and its own, and a row without elements (a null or empty cell) is one row of its own cells.
   */
  constructor(
    private readonly kinds: XlsxKind[],
    private readonly sheetRows = MAX_SHEET_ROWS,
    private readonly itemKinds?: XlsxKind[],
  ) {
    super(kinds.length + (itemKinds ? 1 : 0));
    this.opens = kinds.map((_k, i) => ascii(`<c r="${columnLetters(i)}`));
    this.itemOpens = (itemKinds ?? []).map((_k, i) => ascii(`<c r="${columnLetters(kinds.length + i)}`));
    this.fixed = ROW_OPEN.length + this.num.length + ROW_TAIL.length + ROW_CLOSE.length + [...this.opens, ...this.itemOpens].reduce((sum, b) => sum + b.length + this.num.length + CELL_MOST, 0);
  }

  takeBreaks(): number[] | undefined {
    if (this.breaks.length === 0) return undefined;
    const breaks = this.breaks;
    this.breaks = [];
    return breaks;
  }

  protected row(src: Buffer, at: number, end: number, out: ByteWriter): void {
    if (!this.itemKinds) {
      this.sheetRow(src, at, end, end, end, out);
      return;
    }
    // The row's own cells, then its elements' cell.
    let own = at;
    for (let i = 0; i < this.kinds.length; i++) {
      const length = fieldLength(src, own, end);
      own += 4 + (length > 0 ? length : 0);
    }
    const length = fieldLength(src, own, end);
    const first = own + 4;
    const stop = first + (length > 0 ? length : 0);
    if (stop !== end) throw new Error('a COPY row longer than its fields');
    if (first === stop) {
      this.sheetRow(src, at, own, first, first, out);
      return;
    }
    for (let element = first; element < stop; ) {
      // The element's fields end where the next one's begin.
      let next = element;
      for (let i = 0; i < this.itemKinds.length; i++) {
        const n = fieldLength(src, next, stop);
        next += 4 + (n > 0 ? n : 0);
      }
      this.sheetRow(src, at, own, element, next, out);
      element = next;
    }
  }

  /**
   * Writes one sheet row: the row's own cells, whose fields lie from `at` (up to `end`), and an element's, from
   * `elementAt` up to `elementEnd` (none when they are equal).
   */
  private sheetRow(src: Buffer, at: number, end: number, elementAt: number, elementEnd: number, out: ByteWriter): void {
    if (this.rowInSheet === this.sheetRows) {
      this.breaks.push(out.cut());
      this.rowInSheet = 1;
    }
    this.rowInSheet += 1;
    const num = this.num;
    const numLength = (this.numLength = writeDigits(this.rowInSheet, num, 0));
    // Every byte of every field as a text escaped at its longest; a long row is counted instead.
    let room = this.fixed + (end - at + elementEnd - elementAt) * TEXT_MOST;
    if (room > 1 << 16) room = this.fixed + this.size(this.kinds, src, at, end) + this.size(this.itemKinds ?? [], src, elementAt, elementEnd);
    const dst = out.room(room);
    let o = put(ROW_OPEN, dst, out.position);
    for (let k = 0; k < numLength; k++) dst[o++] = num[k];
    o = put(ROW_TAIL, dst, o);
    o = this.cells(this.kinds, this.opens, src, at, end, dst, o);
    if (this.read !== end) throw new Error('a COPY row longer than its fields');
    if (elementAt !== elementEnd) o = this.cells(this.itemKinds!, this.itemOpens, src, elementAt, elementEnd, dst, o);
    out.advance(put(ROW_CLOSE, dst, o));
  }

  /** Writes the cells of `kinds` whose fields lie from `at` (up to `end`) into `dst` at `o`; `read` is where they ended. */
  private cells(kinds: XlsxKind[], opens: Buffer[], src: Buffer, at: number, end: number, dst: Buffer, o: number): number {
    const { num, numLength } = this;
    for (let i = 0; i < kinds.length; i++) {
      const length = fieldLength(src, at, end);
      at += 4;
      // A null is no cell at all, as XlsxExportWriter leaves it.
      if (length < 0) continue;
      const stop = at + length;
      o = put(opens[i], dst, o);
      for (let k = 0; k < numLength; k++) dst[o++] = num[k];
      const kind = kinds[i];
      if (kind === XlsxKind.Text) o = writeText(src, at, stop, dst, o);
      else if (kind === XlsxKind.Int8) {
        if (length !== 8) throw new Error(`a COPY integer of ${length} bytes, expected 8`);
        o = put(VALUE_OPEN[kind], dst, o);
        o = put(VALUE_CLOSE, dst, writeInt8(src, at, dst, o));
      } else if (kind === XlsxKind.Date) o = this.writeDate(src, at, stop, dst, o);
      else o = writeFloat8(kind, src, at, stop, dst, o);
      at = stop;
    }
    this.read = at;
    return o;
  }

  /** A date-time's cell after its row number (its text `src[at, stop)`), as XlsxExportWriter writes it. */
  private writeDate(src: Buffer, at: number, stop: number, dst: Buffer, o: number): number {
    const last = this.lastDate;
    if (stop - at === ISO_LENGTH && this.lastDateCellLength > 0) {
      let same = true;
      for (let k = 0; same && k < ISO_LENGTH; k++) same = src[at + k] === last[k];
      if (same) {
        const cell = this.lastDateCell;
        for (let k = 0; k < this.lastDateCellLength; k++) dst[o++] = cell[k];
        return o;
      }
    }
    const ms = isoTime(src, at, stop);
    if (Number.isNaN(ms)) return writeDateText(src.toString('utf8', at, stop), dst, o);
    const end = put(VALUE_CLOSE, dst, writeAscii(String(excelSerial(ms)), dst, put(VALUE_OPEN[XlsxKind.Date], dst, o)));
    for (let k = 0; k < ISO_LENGTH; k++) last[k] = src[at + k];
    const cell = this.lastDateCell;
    for (let k = o; k < end; k++) cell[k - o] = dst[k];
    this.lastDateCellLength = end - o;
    return end;
  }

  /** The most bytes the values of the cells of `kinds` whose fields start at `at` come to: their texts' bytes escaped at their longest. */
  private size(kinds: XlsxKind[], src: Buffer, at: number, end: number): number {
    let size = 0;
    for (let i = 0; i < kinds.length && at + 4 <= end; i++) {
      const length = src.readInt32BE(at);
      at += 4;
      if (length < 0) continue;
      // A longer text is cut to MAX_CELL_TEXT characters, each at most TEXT_MOST bytes.
      size += Math.min(length, MAX_CELL_TEXT) * TEXT_MOST;
      at += length;
    }
    return size;
  }
}

/** Writes a few bytes of markup: a loop, since TypedArray's `set` costs a call for each (its calls were a tenth of this reader's profile). */
function put(bytes: Buffer, dst: Buffer, o: number): number {
  for (let k = 0; k < bytes.length; k++) dst[o++] = bytes[k];
  return o;
}

/**
 * A text cell's XML after its row number, as `textTail` writes it: the bytes as they are when each is PLAIN and the
 * text is no longer than a cell holds (its characters are at most its bytes), otherwise through `textTail`.
 */
function writeText(src: Buffer, at: number, stop: number, dst: Buffer, o: number): number {
  const start = o;
  if (stop - at <= MAX_CELL_TEXT) {
    // Leading or trailing white space (a tab, LF or space, the PLAIN bytes up to 0x20) needs the attribute that keeps it.
    const space = stop > at && (src[at] <= 0x20 || src[stop - 1] <= 0x20);
    o = put(space ? TEXT_PRESERVED_BYTES : TEXT_OPEN_BYTES, dst, o);
    let k = at;
    while (k < stop && PLAIN[src[k]] === 1) dst[o++] = src[k++];
    if (k === stop) return put(TEXT_CLOSE_BYTES, dst, o);
  }
  return start + dst.write(textTail(src.toString('utf8', at, stop)), start);
}

/**
 * A number's or an amount's cell (float8's text) as XlsxExportWriter writes the number: its text where it is
 * JavaScript's (`isJsFloat8Text`), otherwise `String` of it (`-0` as 0, exponents as JavaScript writes them); NaN
 * and ±Infinity as a text cell of that name.
 */
function writeFloat8(kind: Exclude<XlsxKind, typeof XlsxKind.Text>, src: Buffer, at: number, stop: number, dst: Buffer, o: number): number {
  if (isJsFloat8Text(src, at, stop)) {
    o = put(VALUE_OPEN[kind], dst, o);
    while (at < stop) dst[o++] = src[at++];
    return put(VALUE_CLOSE, dst, o);
  }
  const text = src.toString('latin1', at, stop);
  const x = Number(text);
  if (!Number.isFinite(x)) return o + dst.write(textTail(text), o);
  return put(VALUE_CLOSE, dst, writeAscii(String(x), dst, put(VALUE_OPEN[kind], dst, o)));
}

/** The length of the API's own form of a date-time (`toISOString`: `2026-04-24T03:18:00.173Z`). */
const ISO_LENGTH = 24;

/** The number of the ASCII digits `src[at, at + n)`, or -1 if one is not a digit. */
function digitsAt(src: Buffer, at: number, n: number): number {
  let v = 0;
  for (let k = at; k < at + n; k++) {
    const d = src[k] - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * The time of a date-time in the API's own form (`YYYY-MM-DDTHH:MM:SS.sssZ`), read from its bytes as `Date.parse`
 * reads it; NaN for a text in any other form, which `Date.parse` itself then reads (writeDateText). Date.UTC gives
 * what Date.parse does for these fields: a day past its month's end rolls over in both (30 February is 2 March);
 * years below 1000 are left to Date.parse, since Date.UTC reads 0 to 99 as 1900 to 1999.
 */
function isoTime(src: Buffer, at: number, stop: number): number {
  if (stop - at !== ISO_LENGTH) return Number.NaN;
  if (src[at + 4] !== 0x2d || src[at + 7] !== 0x2d || src[at + 10] !== 0x54 || src[at + 13] !== 0x3a || src[at + 16] !== 0x3a || src[at + 19] !== 0x2e || src[at + 23] !== 0x5a) return Number.NaN;
  const year = digitsAt(src, at, 4);
  const month = digitsAt(src, at + 5, 2);
  const day = digitsAt(src, at + 8, 2);
  const hour = digitsAt(src, at + 11, 2);
  const minute = digitsAt(src, at + 14, 2);
  const second = digitsAt(src, at + 17, 2);
  const ms = digitsAt(src, at + 20, 3);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) return Number.NaN;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/** A date-time's text as XlsxExportWriter writes it: a serial date where Date.parse reads one, otherwise a text cell. */
function writeDateText(text: string, dst: Buffer, o: number): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return o + dst.write(textTail(text), o);
  return put(VALUE_CLOSE, dst, writeAscii(String(excelSerial(ms)), dst, put(VALUE_OPEN[XlsxKind.Date], dst, o)));
}
