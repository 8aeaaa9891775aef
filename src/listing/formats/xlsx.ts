import { once } from 'node:events';
import { PassThrough, type Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { givingBack } from '../../buffer-recycler.ts';
import { ByteWriter, Coalescer } from './bytes.ts';
import type { CellType, ExportColumn } from './columns.ts';
import { columnLetters, excelSerial, MAX_SHEET_ROWS, SHEET_PIECE_BYTES, sheetRecycler, textTail, XLSX_STYLES } from './xlsx-xml.ts';
import { useNativeZipCrc } from './zip-crc.ts';

// Loaded with ExcelJS, the first time a workbook is written (export.ts).
useNativeZipCrc();

const DATE_STYLE = { numFmt: 'yyyy-mm-dd hh:mm:ss' };
const MONEY_STYLE = { numFmt: '#,##0.00' };
const BOLD = { bold: true };
/**
 * The zip's buffers (archiver's own default is 1 MiB each way) and the entries' (below) at 256 kB: what a paused
 * workbook holds. paused.test.ts's XLSX exports held 11.7-16.1 MB each with 1 MiB (the sheet's 1 MiB pieces
 * fill more of them), 7.0-11.1 MB with 256 kB; side by side, 20 000 products' workbook took 0.95-0.97 of the CPU,
 * a small workbook of orders 0.98 (SQLite) and 1.06 (PostgreSQL)
 * (bench/results/side-by-side-2026-11-28T1343-xlsx-buffers.md).
 */
const ZIP_OPTIONS = { highWaterMark: 1 << 18, zlib: { level: 1, chunkSize: 1 << 18 } };
const WIDTHS: Record<CellType, number> = { integer: 10, number: 10, money: 14, datetime: 20, string: 24, json: 40 };

/** ExcelJS writes chunks as its own reusable StringBuf; a Node stream needs bytes, copied before reuse. */
interface StringBufLike {
  toBuffer(): Buffer;
}
const toBytes = (chunk: unknown): string | Buffer =>
  typeof chunk === 'string' || Buffer.isBuffer(chunk) ? chunk : Buffer.from((chunk as StringBufLike).toBuffer());

/** A zip entry's bytes: a real Node stream, so that a full buffer says so (`write` returns false). */
class EntryStream extends PassThrough {
  override write(chunk: unknown, encoding?: BufferEncoding | ((error: Error | null | undefined) => void), cb?: (error: Error | null | undefined) => void): boolean {
    const write = super.write.bind(this) as (c: unknown, e?: unknown, f?: unknown) => boolean;
    return write(toBytes(chunk), encoding, cb);
  }

  /**
   * The zip's deflate reads the entry through this pipe: it tells the recycler of the sheet's buffers (xlsx-xml.ts,
   * `sheetRecycler`) once it has read each piece, so that the sheet is written into a few buffers again
   * and again (buffer-recycler.ts).
   */
  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    return super.pipe(givingBack(destination as unknown as Writable) as unknown as T, options);
  }
}

const entries = new WeakMap<object, Map<string, EntryStream>>();

/**
 * ExcelJS's streaming workbook writer, with one change: each zip entry is written through a Node stream
 * (ExcelJS's own StreamBuf ignores backpressure, so a slow client would make the server buffer the sheet).
 * ExcelJS writes the package (workbook, styles, sheet views, the header row); `_openStream` is its one seam
 * for where an entry's bytes go.
 */
class StreamingWorkbookWriter extends ExcelJS.stream.xlsx.WorkbookWriter {
  _openStream(path: string): EntryStream {
    const stream = new EntryStream({ highWaterMark: ZIP_OPTIONS.highWaterMark });
    (this as unknown as { zip: { append(s: EntryStream, o: { name: string }): void } }).zip.append(stream, { name: path });
    stream.on('finish', () => stream.emit('zipped'));
    let opened = entries.get(this);
    if (!opened) entries.set(this, (opened = new Map()));
    opened.set(path, stream);
    return stream;
  }
}

interface Internals {
  zip: { abort(): void; finalize(): Promise<void>; on(event: 'error', listener: (err: Error) => void): void };
  styles: { addStyleModel(model: object, cellType: number): number };
}

/**
 * Renders one cell's XML after its reference's row number: the cell is `<c r="B` + the row + this, so that what
 * a value renders to does not depend on its row (the reference is optional in the standard, but ExcelJS's reader
 * and others need it). A value is rendered once for consecutive equal values of its column (XlsxExportWriter).
 */
type CellTail = (value: unknown) => string;

function cellTail(type: CellType, styles: { date: number; money: number }): CellTail {
  // Each tail is one concatenation of a few parts rather than nested template strings (see `render`).
  const text: CellTail = (v) => textTail(typeof v === 'string' ? v : type === 'json' ? JSON.stringify(v) : String(v));
  const number = (style: string): CellTail => {
    const open = `"${style}><v>`;
    return (v) => {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? open + n + '</v></c>' : text(v);
    };
  };
  switch (type) {
    case 'integer':
    case 'number':
      return number('');
    case 'money':
      return number(` s="${styles.money}"`);
    case 'datetime': {
      const open = `" s="${styles.date}"><v>`;
      return (v) => {
        const ms = Date.parse(String(v));
        return Number.isNaN(ms) ? text(v) : open + excelSerial(ms) + '</v></c>';
      };
    }
    default:
      return text;
  }
}

/**
 * Writes an export as an XLSX workbook while the rows arrive: numbers and money as numbers (money with a
 * `#,##0.00` format), dates as dates, a bold frozen header row, widths by column type. ExcelJS writes the
 * package and the header row; data rows are rendered to sheet XML here, because ExcelJS's per-cell object
 * model (`addRow().commit()`) needs 11-15 s for 100 000 products in `npm run bench:exports` on this machine
 * against 2-4 s for this, and the goal is ten times the `sqlite3 -csv` export (about 3 s).
 */
export class XlsxExportWriter {
  private readonly workbook: StreamingWorkbookWriter;
  private readonly internals: Internals;
  private readonly letters: string[];
  /** Per column: `<c r="B`, what renders a value after its row number, and the last value rendered and its XML. */
  private readonly opens: string[];
  private readonly tails: CellTail[];
  private readonly lastValues: unknown[];
  private readonly lastTails: string[];
  private sheet: ExcelJS.Worksheet | undefined;
  private sheetStream: EntryStream | undefined;
  private sheetCount = 0;
  private rowInSheet = 0;
  private failure: Error | undefined;
  private readonly bytes = new ByteWriter(SHEET_PIECE_BYTES, SHEET_PIECE_BYTES, sheetRecycler());
  /** Pieces of sheet XML not yet written, joined into one of SHEET_PIECE_BYTES (`put`). */
  private readonly held = new Coalescer(SHEET_PIECE_BYTES);

  constructor(
    out: Writable,
    private readonly sheetName: string,
    private readonly columns: ExportColumn[],
  ) {
    this.workbook = new StreamingWorkbookWriter({ stream: out, useSharedStrings: false, useStyles: true, zip: ZIP_OPTIONS });
    this.internals = this.workbook as unknown as Internals;
    this.internals.zip.on('error', (err) => (this.failure = err));
    // ExcelJS's commit calls the zip's finalize and drops the promise it returns; after an abort (the client
    // went away while the package was being closed) that promise is rejected, and unheld it ended the process.
    // The same error reaches ExcelJS (and `failure`) as the zip's 'error' event, so it is held here and dropped.
    const zip = this.internals.zip;
    const finalize = zip.finalize.bind(zip);
    zip.finalize = () => {
      const finalizing = finalize();
      finalizing.catch(() => undefined);
      return finalizing;
    };
    this.letters = columns.map((_, i) => columnLetters(i));
    const styles = {
      date: this.internals.styles.addStyleModel(DATE_STYLE, ExcelJS.ValueType.Date),
      money: this.internals.styles.addStyleModel(MONEY_STYLE, ExcelJS.ValueType.Number),
    };
    // PostgreSQL's rows are rendered before the workbook exists (xlsx-copy-reader.ts), with these numbers.
    if (styles.date !== XLSX_STYLES.date || styles.money !== XLSX_STYLES.money) throw new Error(`ExcelJS numbered the export's styles ${styles.date} and ${styles.money}, not ${XLSX_STYLES.date} and ${XLSX_STYLES.money}`);
    this.opens = this.letters.map((l) => `<c r="${l}`);
    this.tails = columns.map((c) => cellTail(c.type, styles));
    this.lastValues = columns.map(() => undefined);
    this.lastTails = columns.map(() => '');
    this.startSheet();
  }

  private startSheet(): void {
    this.sheetCount += 1;
    const name = this.sheetCount === 1 ? this.sheetName : `${this.sheetName} (${this.sheetCount})`;
    const sheet = this.workbook.addWorksheet(name.slice(0, 31), { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = this.columns.map((c) => ({
      width: Math.max(WIDTHS[c.type], Math.min(c.name.length + 2, 40)),
      style: c.type === 'datetime' ? DATE_STYLE : c.type === 'money' ? MONEY_STYLE : {},
    }));
    sheet.autoFilter = `A1:${this.letters[this.letters.length - 1]}1`;
    const header = sheet.addRow(this.columns.map((c) => c.name));
    header.font = BOLD;
    header.commit();
    this.sheet = sheet;
    this.sheetStream = entries.get(this.workbook)!.get(`/xl/worksheets/sheet${sheet.id}.xml`);
    this.rowInSheet = 1;
  }

  /** Appends rows of cells; resolves with the bytes of sheet XML they made once the sheet can take more. */
  async write(rows: unknown[][], signal: AbortSignal): Promise<number> {
    let chars = 0;
    for (let r = 0; r < rows.length; ) {
      if (this.rowInSheet === MAX_SHEET_ROWS) {
        this.endSheet();
        this.startSheet();
      }
      const end = Math.min(rows.length, r + MAX_SHEET_ROWS - this.rowInSheet);
      chars += this.render(rows, r, end);
      r = end;
    }
    if (this.sheetStream!.writableNeedDrain) await once(this.sheetStream!, 'drain', { signal });
    if (this.failure) throw this.failure;
    return chars;
  }

  /**
   * Renders rows into the sheet as bytes in pieces of SHEET_PIECE_BYTES (see ByteWriter: a piece of XML as one
   * string would be converted slowly), so that the strings of a batch never pile up either (left to grow, they outlive
   * young-generation collections and swell the heap of a long export).
   */
  private render(rows: unknown[][], start: number, end: number): number {
    const { opens, tails, lastValues, lastTails, bytes } = this;
    const n = tails.length;
    for (let r = start; r < end; r++) {
      const row = rows[r];
      const num = String(++this.rowInSheet);
      let xml = '<row r="' + num + '">';
      for (let i = 0; i < n; i++) {
        const v = row[i];
        if (v === null || v === undefined) continue;
        // An order's own cells repeat on each of its item lines, and a value renders to the same XML (0 and -0
        // too; NaN, never equal, is rendered each time): rendered once. With each cell one concatenation of a few
        // parts rather than nested template strings (fewer strings to collect), 250 000 lines of 33 cells took
        // 1.48-1.56 s against 2.11-2.30 s where an order's cells repeat on 2.5 lines, and 1.88-1.98 s against
        // 2.41-2.48 s where nothing repeats (a scratch measurement of the rendering alone, node 20, one run).
        if (v !== lastValues[i]) {
          lastValues[i] = v;
          lastTails[i] = tails[i](v);
        }
        xml += opens[i] + num + lastTails[i];
      }
      bytes.write(xml + '</row>');
    }
    let written = 0;
    for (const piece of bytes.take()) {
      this.put(piece);
      written += piece.length;
    }
    return written;
  }

  /**
   * Appends sheet rows rendered from PostgreSQL's cells (xlsx-copy-reader.ts), numbered as this writer numbers
   * its own: `breaks` are the indices of the pieces that begin a new sheet. Resolves once the sheet can take more.
   */
  async writeRows(pieces: Buffer[], breaks: number[] | undefined, signal: AbortSignal): Promise<void> {
    let next = 0;
    // Up to pieces.length: a break after the last piece still begins its sheet.
    for (let i = 0; i <= pieces.length; i++) {
      while (breaks !== undefined && breaks[next] === i) {
        next += 1;
        this.endSheet();
        this.startSheet();
      }
      if (i < pieces.length) this.put(pieces[i]);
    }
    if (this.sheetStream!.writableNeedDrain) await once(this.sheetStream!, 'drain', { signal });
    if (this.failure) throw this.failure;
  }

  /**
   * Writes a piece of sheet XML, joined with the next ones into pieces of SHEET_PIECE_BYTES (see there): PostgreSQL's
   * rows come a socket read at a time, some 100 kB of XML, and each piece is a job of the deflate that waits for the
   * main thread before the next. 100 000 products on PostgreSQL, alternating with the same code writing each piece
   * as it came, medians of nine: 0.92 s against 1.09 s.
   */
  private put(piece: Buffer): void {
    const whole = this.held.add(piece);
    if (whole) this.sheetStream!.write(whole);
  }

  /** Writes what is held of the sheet, and closes it. */
  private endSheet(): void {
    const rest = this.held.take();
    if (rest) this.sheetStream!.write(rest);
    this.sheet!.commit();
  }

  /** Closes the sheet and the package; resolves when the last byte is written to the output. */
  async finish(): Promise<void> {
    this.endSheet();
    await this.workbook.commit();
    if (this.failure) throw this.failure;
  }

  /** Drops the workbook after the client went away. */
  abort(): void {
    try {
      this.internals.zip.abort();
    } catch {
      // Already finished or aborted: nothing to release.
    }
    for (const stream of entries.get(this.workbook)?.values() ?? []) stream.destroy();
  }
}
