import { sql, type RawBuilder } from 'kysely';
import type { CellType, ExportLayout } from './columns.ts';
import type { CsvOptions } from './csv.ts';
import { lineEncoderNames } from './ndjson.ts';
import { cellTypeOf, everyNumber, literal } from './line-cells.ts';

/*
 * An NDJSON export's lines written by SQLite itself (`json_object`), byte for byte what ndjson.ts writes, so
 * that one text per row crosses into JavaScript instead of a value per field: better-sqlite3 makes a JavaScript
 * value of each, and for the 522 171 product-parameter values of 100 000 products reading eight values a row
 * and encoding them took most of an NDJSON snapshot (about 1.7 s of reading and 1.5 s of encoding, against
 * 0.5 s for the whole `sqlite3 -csv`). line-source.ts reads these lines in keyset batches.
 *
 * `json_object` quotes text as JSON.stringify does (`"` and `\` escaped, \b \f \n \r \t by name, other control
 * characters as lowercase \u00xx, nothing else escaped: not `/`, DEL or U+2028), writes integers as their digits
 * and NULL as null. What it writes otherwise is a REAL (`2.0`, and 15 digits where JavaScript writes up to 17),
 * so a number field is written through printf (below), and each row says whether its numbers are ones printf
 * writes as JavaScript does (`sqliteNumbersInRange`); from a batch with one that is not, the export is read as
 * records and encoded in JavaScript (line-source.ts).
 * Integer and text fields hold what the API wrote into them (integers and text: the schemas validate every
 * write), so their values are written as they are stored.
 *
 * Covered: NDJSON and CSV (`sqliteCsvLine`) of layouts whose cells are their fields (as pg-lines.ts: no nested
 * values, no includes, nothing decoded). test/listing/formats/sqlite-lines.test.ts holds each value to
 * JSON.stringify and to CsvEncoder on random values, and every export to the JavaScript path.
 */

type Expr = RawBuilder<string>;

/**
 * A number as JSON text the way JavaScript writes it, for the values `sqliteNumberInRange` accepts: NULL stays
 * NULL (json_object's null; printf would write it as 0), 0 (and -0) is `0`, otherwise printf's 15 significant
 * digits without trailing zeros, which for 1e-4 <= |x| < 1e15 is fixed notation. Where those 15 digits read back
 * as the same double they are JavaScript's own shortest digits: no two decimals of at most 15 digits are the
 * same double. `json()` makes the text a JSON value of the object.
 */
export const sqliteJsonNumber = (x: Expr): Expr => sql<string>`json(case when ${x} is null then null when ${x} = 0 then '0' else printf('%.15g', ${x}) end)`;

/** Whether a number is written by `sqliteJsonNumber` as JavaScript writes it (null counts: it has no digits). */
export const sqliteNumberInRange = (x: Expr): Expr =>
  sql<string>`(${x} is null or ${x} = 0 or (typeof(${x}) in ('real', 'integer') and abs(${x}) >= 1e-4 and abs(${x}) < 1e15 and cast(printf('%.15g', ${x}) as real) = ${x}))`;

/**
 * The condition that every number of a row is one `sqliteJsonNumber` writes as JavaScript does, or undefined
 * when the layout has no number: each line's row brings it (line-source.ts).
 */
export const sqliteNumbersInRange = (layout: ExportLayout): Expr | undefined => everyNumber(layout, sqliteNumberInRange);

/** The SQL expression of an NDJSON line (without its line end), or undefined when the layout needs the JavaScript encoder. */
export function sqliteLine(layout: ExportLayout): Expr | undefined {
  if (!layout.identity) return undefined;
  const shown = layout.shape.shown;
  // SQLite takes at most 1 000 arguments to a function: two per field.
  if (shown.length === 0 || shown.length > 400) return undefined;
  const types = shown.map(cellTypeOf);
  if (types.some((t) => t === undefined)) return undefined;
  const names = lineEncoderNames(layout);
  if (!names) return undefined;
  const parts = shown.map((f, i) => {
    const value = sql.ref(f.column) as unknown as Expr;
    return sql`${literal(names[i])}, ${types[i] === 'number' ? sqliteJsonNumber(value) : value}`;
  });
  return sql<string>`json_object(${sql.join(parts)})`;
}

/** What a spreadsheet reads as a formula (csv.ts, `neutralise`): `=`, `+`, `-`, `@`, tab, CR, as code points. */
const FORMULA_CODES = sql.raw('61, 43, 45, 64, 9, 13');

/**
 * The `'` that csv.ts's `neutralise` puts before a text a spreadsheet would run as a formula, or nothing: the first
 * character's code point (`unicode`) against six; a text that starts with a sign is left alone when it is a plain
 * signed number (`^[+-]?[0-9][0-9.,]*$`: a sign, a digit, then only digits, points and commas).
 */
const formulaGuard = (x: Expr): Expr =>
  sql<string>`case when unicode(${x}) in (${FORMULA_CODES}) and not (${x} glob '[+-][0-9]*' and substr(${x}, 3) not glob '*[^0-9.,]*') then '''' else '' end`;

/** A number as CSV text the way JavaScript writes it (csv.ts: String(Number(v))), for values `sqliteNumberInRange` accepts; NULL stays NULL. */
const sqliteCsvNumber = (x: Expr): Expr => sql<string>`case when ${x} is null then null when ${x} = 0 then '0' else printf('%.15g', ${x}) end`;

/** One cell of `sqliteCsvLine`: its part of printf's format, and the arguments that part reads. */
export function sqliteCsvCell(type: CellType, value: Expr, options: CsvOptions): { format: string; args: Expr[] } {
  // %s writes a NULL as nothing.
  if (type === 'number') return { format: '%s', args: [sqliteCsvNumber(value)] };
  if (type !== 'string') return { format: '%s', args: [value] };
  // The quotes, the guard, the text, the quotes: %w writes a NULL as "(NULL)", so a null text is an empty text
  // between no quotes. Four arguments of the one printf measured faster than a printf per text inside it
  // (1.2 s against 1.5-1.8 s for the lines of 1.17 M product-parameter values through `sqlite3`).
  const quote = sql<string>`case when ${value} is null then '' else '"' end`;
  const text = sql<string>`coalesce(${value}, '')`;
  return options.escapeFormulas ? { format: '%s%s%w%s', args: [quote, formulaGuard(value), text, quote] } : { format: '%s%w%s', args: [quote, text, quote] };
}

/**
 * The condition that `sqliteCsvLine` writes a row as CsvEncoder does, or undefined when it always does: its numbers
 * are in range, and no text holds a NUL, which printf would take for the text's end. The API refuses NUL in
 * what it is sent (http/validation.ts) but an import or a sync could still store one on SQLite; such a row's
 * batch and the rest are encoded in JavaScript (line-source.ts).
 */
export function sqliteCsvRowWritable(layout: ExportLayout): Expr | undefined {
  const texts = layout.shape.shown.filter((f) => cellTypeOf(f) === 'string').map((f) => sql<string>`ifnull(instr(${sql.ref(f.column)}, char(0)), 0) = 0`);
  const numbers = sqliteNumbersInRange(layout);
  const all = numbers ? [numbers, ...texts] : texts;
  return all.length ? sql<string>`(${sql.join(all, sql` and `)})` : undefined;
}

/**
 * The SQL expression of a CSV line (without its CR LF) as CsvEncoder writes it (csv.ts), or undefined where the
 * layout or options need the JavaScript encoder (a `locale`'s decimal comma and dates, includes, nested values).
 * One `printf` makes the line: every text quoted by `"%w"` (quotes doubled, in C) after the formula guard, a
 * null empty (no quotes); integers, money and dates as they are stored (digits, and the API's decimal and
 * timestamp text); numbers through `sqliteCsvNumber`. Each row says whether its line is right
 * (`sqliteCsvRowWritable`: its numbers in range, no NUL), as for NDJSON (line-source.ts). Because every text is
 * quoted, no text is tested for characters to quote: for 1.17 M product-parameter values `sqlite3` wrote these
 * lines in 1.2 s against 0.74 s for its own `-csv`, where quoting only a text that holds a delimiter, quote, CR or
 * LF (a `glob` per text) took 1.4 s. A whole export of them in process: 1.7-2.0 s as these lines (joined per
 * batch, line-source.ts), 2.1-2.8 s as values read into JavaScript and encoded there.
 */
export function sqliteCsvLine(layout: ExportLayout, options: CsvOptions): Expr | undefined {
  if (!layout.identity || options.spreadsheet || options.decimal === ',') return undefined;
  const shown = layout.shape.shown;
  // SQLite takes at most 1 000 arguments to a function: up to four per field, and the format.
  if (shown.length === 0 || shown.length > 200 || layout.columns.length !== shown.length) return undefined;
  const types = shown.map(cellTypeOf);
  if (types.some((t) => t === undefined)) return undefined;
  const cells = shown.map((f, i) => sqliteCsvCell(types[i]!, sql.ref(f.column) as unknown as Expr, options));
  // The delimiters (CSV_DELIMITERS: comma, semicolon, tab, bar) hold no % for printf.
  return sql<string>`printf(${literal(cells.map((c) => c.format).join(options.delimiter))}, ${sql.join(cells.flatMap((c) => c.args))})`;
}
