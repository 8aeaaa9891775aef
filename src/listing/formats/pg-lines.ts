import { sql, type RawBuilder } from 'kysely';
import type { CellType, ExportLayout } from './columns.ts';
import type { CsvOptions } from './csv.ts';
import { CellKind } from './json-copy-reader.ts';
import { cellTypeOf, everyNumber } from './line-cells.ts';
import { XlsxKind } from './xlsx-copy-reader.ts';
import { lineEncoderNames } from './ndjson.ts';

/*
 * An export's lines written by PostgreSQL itself, byte for byte what the API's own encoders write (csv.ts,
 * ndjson.ts), so that the rows come through `COPY … TO STDOUT` (copy-source.ts) as finished text: no value
 * is parsed into JavaScript and written out again. Measured on 100 000 products, node-pg's parsing of rows
 * into values was most of an export's time (1.3 s against 0.45 s for `psql \copy`), while PostgreSQL builds
 * these lines in 0.39 s against 0.30 s for its own CSV.
 *
 * Covered: layouts whose cells are their fields (no nested values, no includes, nothing decoded from JSON
 * text), the API's CSV with any delimiter (with or without the formula guard), and NDJSON. CSV of two columns
 * or more goes through PostgreSQL's own CSV writer, given cells (`pgCsvCells`); a single column as whole lines
 * (`pgLine`); NDJSON as a cell per field, which json-copy-reader.ts makes lines of (`pgJsonCells`: a JSON
 * text built per row cost PostgreSQL more than twice its CSV). Nested arrays and JSON-text fields (orders) are
 * pg-nested-lines.ts's; anything else (a `locale`'s decimal comma and dates, includes) is left to the JavaScript
 * encoders: these answer undefined.
 * test/listing/formats/pg-lines.test.ts holds each expression to the JavaScript encoder on random values, and
 * every export to the other path.
 */

type Expr = RawBuilder<string>;

/**
 * A float8 as JavaScript's `String(number)` writes it, for the values PostgreSQL writes in JavaScript's form:
 * zero, NaN, ±Infinity, and magnitudes from 1e-4 up to 1e15 (see `numbersInRange`). PostgreSQL (12+) writes the
 * shortest digits that read back as the same double, as JavaScript does, but -0 as `-0`, and outside that range
 * with an exponent where JavaScript writes none (1e-5, 1e16) or pads it (`1.5e-07`). Where a halfway point
 * between two doubles is itself a short decimal (from 2^53 up) the two even choose other digits: the property
 * test in pg-lines.test.ts found 54935381158050940, which PostgreSQL writes 5.4935381158050944e+16. In the
 * range both are the unique shortest digits: halfway points there need at least 19 of them.
 */
export const jsNumber = (x: Expr): Expr => sql<string>`case when ${x} = 0 then '0' else ${x}::text end`;

/** Whether a float8 is written by `jsNumber` as JavaScript writes it (null counts: it has no digits). */
export const numberInRange = (x: Expr): Expr =>
  sql<string>`(${x} is null or ${x} = 0 or ${x} in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8) or (abs(${x}) >= 1e-4 and abs(${x}) < 1e15))`;

/**
 * What a spreadsheet reads as a formula (csv.ts, `neutralise`): a leading `'`, unless the text is a plain signed
 * number. The first character is taken as its code point (`ascii`) against six, rather than as a text
 * (`left(s, 1)`) against six texts, which made a text and compared it under the collation: `COPY` of 1.17 M
 * product-parameter values with three guarded columns took 1.08 s against 1.37 s (0.94 s unguarded).
 */
const neutralised = (s: Expr): Expr =>
  sql<string>`case when ascii(${s}) in (61, 43, 45, 64, 9, 13) and ${s} !~ '^[+-]?[0-9][0-9.,]*$' then '''' || ${s} else ${s} end`;

/** A delimiter as an SQL string literal; they come from CSV_DELIMITERS only. */
const delimiterText = (d: string): string => (d === '\t' ? `E'\\t'` : `'${d.replace(/'/g, "''")}'`);
const delimiterLiteral = (d: string): Expr => sql.raw<string>(delimiterText(d));

/**
 * RFC 4180 quoting (csv.ts, `quoted`): a field holding the delimiter, a quote, CR or LF is quoted, quotes doubled.
 * The test reads `raw`, the text before `written` (the formula guard) prepended its `'`, which is none of those:
 * each expression is evaluated once per branch, not inside the other.
 */
function quoted(raw: Expr, written: Expr, delimiter: string): Expr {
  // One regular expression rather than a strpos per character, which walks multibyte text once each (for the
  // descriptions of 100 000 products about 180 ms against 140 ms). The characters stand in the literal as they are.
  const special = sql.raw<string>(`'[${delimiter}"\r\n]'`);
  return sql<string>`case when ${raw} ~ ${special} then '"' || replace(${written}, '"', '""') || '"' else ${written} end`;
}

/** One CSV cell of a non-null value, as CsvEncoder writes it; undefined for a type or option it leaves to JavaScript. */
export function csvCell(type: CellType, value: Expr, options: CsvOptions): Expr | undefined {
  if (options.spreadsheet || options.decimal === ',') return undefined;
  switch (type) {
    case 'integer':
    case 'money':
    case 'datetime':
      // Digits, a sign and a point (money and integers as PostgreSQL writes them, which is what node-pg hands
      // over), or the API's own timestamp text: never anything to quote.
      return sql<string>`${value}::text`;
    case 'number':
      return jsNumber(value);
    case 'string': {
      const text = sql<string>`${value}::text`;
      const cell = quoted(text, options.escapeFormulas ? neutralised(text) : text, options.delimiter);
      // Most text needs neither quotes nor the guard: one regular expression finds that (as csv.ts's `touched`).
      const touched = sql.raw<string>(`'${options.escapeFormulas ? "^[-=+@\t\r]|" : ''}[${options.delimiter}"\r\n]'`);
      return sql<string>`case when ${text} ~ ${touched} then ${cell} else ${text} end`;
    }
    default:
      return undefined;
  }
}

/** One value of an NDJSON line, as JSON.stringify writes it (ndjson.ts, `valueJson`); undefined where JavaScript must. */
export function jsonValue(type: CellType, value: Expr): Expr | undefined {
  switch (type) {
    case 'integer':
      return sql<string>`${value}::text`;
    case 'number':
      // JSON has no NaN or Infinity: JSON.stringify writes null.
      return sql<string>`case when ${value}::text in ('NaN', 'Infinity', '-Infinity') then 'null' else ${jsNumber(value)} end`;
    case 'money':
    case 'datetime':
      // Money: node-pg hands numeric over as its text, which the answer holds as a string. Date-times: the API's
      // own timestamp text (`2026-04-24T03:18:00.173Z`, as csvCell assumes). Neither holds anything to escape, so
      // each is only quoted; to_json for each date-time cost a tenth of an NDJSON export's time in PostgreSQL
      // (`COPY` of 104 182 product-parameter values into /dev/null, medians of six: 0.51 s against 0.43 s).
      return sql<string>`'"' || ${value}::text || '"'`;
    case 'string':
      // PostgreSQL escapes what JSON.stringify escapes: `"`, `\`, and control characters (\b \f \n \r \t by
      // name, the others as lowercase \u00xx); neither escapes anything else (U+2028, DEL).
      return sql<string>`to_json(${value}::text)::text`;
    default:
      return undefined;
  }
}

/** The cells of an NDJSON export for JsonCopyReader: each field's cell, and how the reader takes it. */
export interface JsonCells {
  names: string[];
  cells: Expr[];
  kinds: CellKind[];
}

/**
 * An NDJSON export's cells as JsonCopyReader reads them in the binary format (null for null), or undefined where
 * the layout is not a plain one (a cell per field, each of a type covered here, names an object keeps in order).
 * Integers come as int8 and numbers as float8's text, which the reader writes as JSON.stringify writes them in any
 * range (so no row is checked with `numbersInRange` first); everything else as its text, quoted and escaped by it.
 */
export function pgJsonCells(layout: ExportLayout): JsonCells | undefined {
  if (!layout.identity) return undefined;
  const shown = layout.shape.shown;
  const names = lineEncoderNames(layout);
  if (shown.length === 0 || !names || names.length !== shown.length) return undefined;
  const types = shown.map(cellTypeOf);
  if (types.some((t) => t === undefined)) return undefined;
  const kinds = types.map((t) => (t === 'integer' ? CellKind.Int8 : t === 'number' ? CellKind.Float8Text : CellKind.Text));
  const cells = shown.map((f, i) => {
    const value = sql.ref(f.column) as unknown as Expr;
    return kinds[i] === CellKind.Int8 ? sql<string>`${value}::int8` : kinds[i] === CellKind.Float8Text ? sql<string>`${value}::float8::text` : sql<string>`${value}::text`;
  });
  return { names, cells, kinds };
}

/**
 * The cells of an XLSX export for XlsxCopyReader: a cell per column, and how the reader takes each; for a layout
 * with an exploded nested array (orders' items, pg-nested-lines.ts), a last cell of its elements' cells
 * (`itemKinds`), which the reader makes a row each of; the condition its rows must meet (`inRange`), and a
 * lateral subquery the cells read from (`lateral`, as `x`).
 */
export interface XlsxCells {
  cells: Expr[];
  kinds: XlsxKind[];
  itemKinds?: XlsxKind[];
  inRange?: Expr;
  lateral?: Expr;
}

/** A value's XLSX cell for XlsxCopyReader, and how the reader takes it; undefined for a type it leaves to JavaScript. */
export function xlsxCell(type: CellType | undefined, value: Expr): { cell: Expr; kind: XlsxKind } | undefined {
  switch (type) {
    case 'integer':
      return { cell: sql<string>`${value}::int8`, kind: XlsxKind.Int8 };
    case 'number':
    case 'money':
      // numeric(14, 2) as float8 is Number() of its text: both the nearest double.
      return { cell: sql<string>`${value}::float8::text`, kind: type === 'money' ? XlsxKind.Money : XlsxKind.Number };
    case 'datetime':
    case 'string':
      // A date-time as its text, which the reader makes a serial date of. Computed by PostgreSQL instead (guarded
      // by a regular expression of the API's form, since its cast fails on anything else), the serial dates doubled
      // the time of the products' COPY through psql (0.47 s → 1.0 s).
      return { cell: sql<string>`${value}::text`, kind: type === 'datetime' ? XlsxKind.Date : XlsxKind.Text };
    default:
      return undefined;
  }
}

/**
 * An XLSX export's cells as XlsxCopyReader reads them in the binary format (null for null, which is no cell), or
 * undefined where the layout is not a plain one (a column per shown field, each of a type covered here): nested
 * layouts are pg-nested-lines.ts's.
 */
export function pgXlsxCells(layout: ExportLayout): XlsxCells | undefined {
  if (!layout.identity) return undefined;
  const shown = layout.shape.shown;
  if (shown.length === 0 || layout.columns.length !== shown.length) return undefined;
  const cells: Expr[] = [];
  const kinds: XlsxKind[] = [];
  for (const f of shown) {
    const cell = xlsxCell(cellTypeOf(f), sql.ref(f.column) as unknown as Expr);
    if (!cell) return undefined;
    cells.push(cell.cell);
    kinds.push(cell.kind);
  }
  return { cells, kinds };
}

/**
 * The cells of a CSV export for PostgreSQL's own CSV writer (`COPY … (format csv)`, read by CsvCopyReader in
 * copy-source.ts), or undefined where the layout or options are not what it writes as CsvEncoder does. Its
 * quoting is RFC 4180's as CsvEncoder applies it (a value holding the delimiter, a quote, CR or LF is quoted,
 * quotes doubled), done in C: the lines of `pgLine` test each text cell with a regular expression for that.
 * `COPY` of 1.17 M product-parameter values through psql: the lines 1.6 s against 0.94 s for the plain table;
 * these cells 1.3-1.4 s against 1.0-1.1 s in a later run. Two differences are closed here: an empty text would
 * be written `""` (PostgreSQL's way of telling it from null), so it is given as null; and a lone column whose
 * value is `\.` would be quoted (it is the end marker of COPY's text), so a single column is left to `pgLine`.
 * Records end in LF; the reader makes it CRLF.
 */
export function pgCsvCells(layout: ExportLayout, options: CsvOptions): Expr[] | undefined {
  if (!layout.identity || options.spreadsheet || options.decimal === ',') return undefined;
  const shown = layout.shape.shown;
  if (shown.length < 2 || layout.columns.length !== shown.length) return undefined;
  const cells = shown.map((f) => {
    const type = cellTypeOf(f);
    return type && pgCsvCell(type, sql.ref(f.column) as unknown as Expr, options);
  });
  return cells.every((c) => c !== undefined) ? (cells as Expr[]) : undefined;
}

/** One cell of `pgCsvCells` (a null is written empty by PostgreSQL); undefined for a type or option it leaves to JavaScript. */
export function pgCsvCell(type: CellType, value: Expr, options: CsvOptions): Expr | undefined {
  // Only text differs from a line's cell: PostgreSQL quotes it, and an empty one must not read as `""`.
  if (type !== 'string') return csvCell(type, value, options);
  const text = sql<string>`${value}::text`;
  return sql<string>`nullif(${options.escapeFormulas ? neutralised(text) : text}, '')`;
}

/** The `COPY` options of `pgCsvCells`' export: PostgreSQL's CSV with the export's delimiter. */
export const pgCsvOptions = (options: CsvOptions): string => `format csv, delimiter ${delimiterText(options.delimiter)}`;

/** `a || b || …` of parts. */
export const joined = (parts: Expr[]): Expr => sql.join(parts, sql` || `) as Expr;

/**
 * The condition that every number of a row is one `jsNumber` writes as JavaScript does, or undefined when the
 * layout has no number: an export checks it over its rows before PostgreSQL writes them (copy-source.ts).
 */
export const numbersInRange = (layout: ExportLayout): Expr | undefined => everyNumber(layout, numberInRange);

/**
 * The SQL expression of a whole CSV line of this export, with its CR LF (for a single column: `pgCsvCells` covers
 * the others), or undefined when the layout or options need the JavaScript encoder.
 */
export function pgLine(layout: ExportLayout, options: CsvOptions): Expr | undefined {
  if (!layout.identity) return undefined;
  const shown = layout.shape.shown;
  // Identity layouts have a column per shown field, in order.
  if (shown.length === 0 || layout.columns.length !== shown.length) return undefined;
  const cells = shown.map((f) => {
    const type = cellTypeOf(f);
    return type && csvCell(type, sql.ref(f.column) as unknown as Expr, options);
  });
  if (cells.some((c) => c === undefined)) return undefined;
  const parts: Expr[] = [];
  cells.forEach((cell, i) => {
    if (i > 0) parts.push(delimiterLiteral(options.delimiter));
    parts.push(sql<string>`coalesce(${cell!}, '')`);
  });
  parts.push(sql.raw<string>(`E'\\r\\n'`));
  return joined(parts);
}
