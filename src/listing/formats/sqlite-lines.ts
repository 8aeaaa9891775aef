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
 * Covered: NDJSON of layouts whose cells are their fields (as pg-lines.ts: no nested values, no includes,
 * nothing decoded), and CSV of the same layouts (`sqliteCsvCells`, below), whose quoting and formula guard stay in
 * JavaScript. Whole CSV lines built by SQLite (quoting by `glob` and `replace`, the formula guard by `substr` and
 * `trim`) measured slower than reading the values and encoding them in JavaScript, in an alternating comparison
 * of whole exports (medians of five: 1.90 s against 1.78 s for 522 171 product-parameter values, 1.92 s against
 * 1.09 s for 100 000 products, whose long descriptions each pattern reads through). Quoting every text instead
 * (`printf` with `"%w"`, a CSV format change) was faster for the narrow rows of product-parameter values and
 * slower for products (seventh session, docs/benchmarks.md, Snapshots). Nor was a batch's lines joined by SQLite
 * into one BLOB (`string_agg`, cast): faster in a fresh process for narrow rows, but over HTTP the server's CPU
 * per export was the same for those and 16 % more for products
 * (bench/results/side-by-side-2026-11-27T1631-ndjson-joined.md).
 * test/listing/formats/sqlite-lines.test.ts holds each value to JSON.stringify on random values, and every
 * export to the JavaScript path; joined-cells.test.ts holds the CSV records to CsvEncoder's on random cells.
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

/**
 * The SQL expression of a CSV row's cells joined by CELL_SEPARATOR (csv.ts; `concat`, a null as empty), each as
 * the export writes it but for the quoting and formula guard of text, which `joinedCellsWriter` adds: numbers
 * through printf as in the NDJSON lines (with the same range check per row), integers, money (text on SQLite) and
 * dates as stored. Undefined where the layout or options need the JavaScript encoder (a decimal comma and
 * spreadsheet cells write numbers and dates otherwise). One text per row crosses into JavaScript instead of a value
 * per field: the CSV of 1.17 M product-parameter values took 1.77-1.80 s against 2.40-2.44 s through the values
 * (medians of six alternating runs, in process), that of 224 821 products the same either way (their long
 * descriptions are most of a row, and each is read through by the test for quoting in both).
 */
export function sqliteCsvCells(layout: ExportLayout, options: CsvOptions): { expr: Expr; types: CellType[] } | undefined {
  if (!layout.identity || options.spreadsheet || options.decimal === ',') return undefined;
  const shown = layout.shape.shown;
  // `concat` takes at most 1 000 arguments too: a field and a separator each.
  if (shown.length === 0 || shown.length > 400 || layout.columns.length !== shown.length) return undefined;
  const types = shown.map(cellTypeOf);
  if (types.some((t) => t === undefined)) return undefined;
  const cells = shown.map((f, i) => {
    const value = sql.ref(f.column) as unknown as Expr;
    return types[i] === 'number' ? sqliteCsvNumber(value) : value;
  });
  return { expr: sql<string>`concat(${sql.join(cells, sql`, char(31), `)})`, types: types as CellType[] };
}

/** `sqliteJsonNumber`'s digits as a CSV cell: a null stays null (concat's empty). */
const sqliteCsvNumber = (x: Expr): Expr => sql<string>`case when ${x} is null then null when ${x} = 0 then '0' else printf('%.15g', ${x}) end`;
