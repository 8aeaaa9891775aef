/*
 * The XML of a sheet's cells, written by XlsxExportWriter from JavaScript values (xlsx.ts) and by XlsxCopyReader
 * from PostgreSQL's bytes (xlsx-copy-reader.ts), which must write the same bytes; kept apart from xlsx.ts, which
 * loads ExcelJS.
 */
import { BufferRecycler } from '../../buffer-recycler.ts';

/** Excel's limit of rows per sheet, the header included; a longer export goes on in another sheet. */
export const MAX_SHEET_ROWS = 1_048_576;
/** Excel's limit of characters in one cell; a longer text is cut there (CSV and JSON carry it whole). */
export const MAX_CELL_TEXT = 32_767;
const DAY_MS = 86_400_000;
/** 1970-01-01 as an Excel serial date (the 1900 date system). */
const UNIX_EPOCH_SERIAL = 25_569;
/** A time (milliseconds since 1970 in UTC) as an Excel serial date. */
export const excelSerial = (ms: number): number => UNIX_EPOCH_SERIAL + ms / DAY_MS;

/**
 * The sheet's XML goes to the zip's deflate (zlib, on a thread of libuv's pool) in pieces of 1 MiB (PostgreSQL's
 * rows joined into them: XlsxExportWriter's `put`), and the deflate writes its output in 256 kB buffers. Each
 * piece, and each full output buffer, waits for a callback on the main thread, which is busy rendering the next
 * rows: with 64 kB pieces and zlib's 16 kB buffer, the deflate mostly waited for it, and compressing added most
 * of its time to the export's (and the many small chunks cost CPU of their own in the zip's streams). Whole
 * batches let it compress one while the next is rendered: 224 821 products on SQLite, 6.0-7.6 s before, 4.2-5.3 s
 * after, in process on a noisy machine (bench/results/exports-2026-11-26.md for the exports benchmark).
 */
export const SHEET_PIECE_BYTES = 1 << 20;
/**
 * Where a sheet's buffers come from (XlsxExportWriter's, and those XlsxCopyReader writes PostgreSQL's rows into:
 * export.ts, `exportBytes`): given back by the zip's deflate once it has read them (xlsx.ts, EntryStream's
 * `pipe`). Without them, each MiB of the sheet was a new buffer, and V8 ran a full garbage collection for every
 * few tens of MB of them (seven during an export of 100 000 products, with the socket's reads). Those products on
 * PostgreSQL took 1.35 s (1.56 s of CPU) at 8a9bff7 and 0.90 s (1.04 s) with this and the joined pieces of
 * XlsxExportWriter's `put`, over HTTP, alternating, medians of nine. The deflate reads up to some five or six MiB
 * behind the writer (the entry's stream and the deflate's own buffer): eight lent buffers are tracked; with a
 * compressor's four, most were never given back (93 new buffers for those products against 7).
 */
export const sheetRecycler = (): BufferRecycler => new BufferRecycler(2, 8);
/**
 * The style numbers ExcelJS gives the two number formats a workbook registers (XlsxExportWriter registers them
 * first, date then money, and checks that it is given these): a sheet's cells name them (`s="1"`).
 */
export const XLSX_STYLES = { date: 1, money: 2 } as const;

/** A column's letters in a cell reference: A to Z, AA to ZZ, AAA … */
export function columnLetters(index: number): string {
  let s = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

// Characters XML 1.0 cannot hold at all, lone surrogates, and what must be escaped.
// eslint-disable-next-line no-control-regex
const XML_SPECIAL = /[&<>\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF\uD800-\uDFFF]/;
// eslint-disable-next-line no-control-regex
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' };
export const TEXT_OPEN = '" t="inlineStr"><is><t>';
export const TEXT_PRESERVED = '" t="inlineStr"><is><t xml:space="preserve">';
export const TEXT_CLOSE = '</t></is></c>';

/** A text cell's XML after its reference's row number (see CellTail): an inline string. */
export function textTail(value: string): string {
  let s = value.length > MAX_CELL_TEXT ? value.slice(0, MAX_CELL_TEXT) : value;
  if (XML_SPECIAL.test(s)) s = s.replace(XML_INVALID, '').replace(/[&<>\r]/g, (c) => ESCAPES[c]);
  // Leading or trailing white space survives only when the text says so.
  const space = s.length > 0 && (s.charCodeAt(0) <= 32 || s.charCodeAt(s.length - 1) <= 32);
  return (space ? TEXT_PRESERVED : TEXT_OPEN) + s + TEXT_CLOSE;
}
