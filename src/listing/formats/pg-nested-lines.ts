import { sql, type RawBuilder } from 'kysely';
import type { Field, JsonSchema, NestedTable } from '../../resources/types.ts';
import { schemaCellType, type ExportLayout } from './columns.ts';
import type { CsvOptions } from './csv.ts';
import { cellTypeOf, literal } from './line-cells.ts';
import { lineEncoderNames, misplaced } from './ndjson.ts';
import { joined, jsonValue, numberInRange, pgCsvCell, xlsxCell, type XlsxCells } from './pg-lines.ts';
import { XlsxKind } from './xlsx-copy-reader.ts';

/*
 * PostgreSQL's lines (pg-lines.ts) for layouts with nested arrays stored in tables (`nestedTables`: orders'
 * items) and objects stored as JSON text (orders' addresses), byte for byte what the JavaScript encoders write
 * from the records that `attach` completes. The rows of `COPY` stay the listing's rows in its order (the keyset's
 * index gives them):
 * - NDJSON: one text per item, its line, its array built by a subquery over the nested table in the table's order
 *   (`string_agg(… order by position)`), each element's keys in `columns`' order as `attach` writes them; a
 *   JSON-text field written as it is stored (define.ts stores JSON.stringify's text, which JSON.stringify writes
 *   again from the parsed value; line breaks, which valid JSON holds only as whitespace, are dropped so that a
 *   text stored by hand cannot end the line early).
 * - CSV: one record per element of the exploded array (`exportRowPer`) through a lateral left join (an item
 *   without elements keeps its one record, its element's cells empty), in the elements' order after the
 *   listing's, written by PostgreSQL's CSV writer as pgCsvCells' are (`pgNestedCsvCells`); the item's own cells
 *   made once and repeated on each; an object's keys read from its text parsed once (`::jsonb`), where every value
 *   can be read as text (`parsable`). A marker before each record tells CsvCopyReader which begin an item.
 * - XLSX: the item's own cells, an object's keys read as CSV's are (from a lateral subquery, `x`), and one cell of
 *   all its elements' cells in the binary format's framing (`pgNestedXlsxCells`), which XlsxCopyReader makes a row
 *   each of, the item's own cells repeated on each.
 * Covered: shown fields that pg-lines.ts covers or that are JSON text (CSV and XLSX: objects whose spread keys are
 * text), nested arrays with a table whose element values it covers, no includes. Anything else stays with JavaScript.
 * Measured on 100 000 orders with 249 518 items: see docs/benchmarks.md ("Exports"). pg-lines.test.ts holds
 * every export to the JavaScript path.
 */

type Expr = RawBuilder<string>;

/** A line of a nested layout, and the condition that its numbers are ones PostgreSQL writes as JavaScript does (pgLine's numbersInRange). */
export interface NestedLine {
  line: Expr;
  inRange?: Expr;
}

/** An object stored as its JSON text (define.ts), which the lines may write or parse. */
const isJsonText = (f: Field): boolean => f.type === 'object' && f.jsonText === true;

const ref = (column: string): Expr => sql.ref(column) as unknown as Expr;

/** The elements' schemas of a nested array, by key in `columns`' order; undefined when a key would not stay in place. */
function elementTypes(layout: ExportLayout, key: string): Array<[string, ReturnType<typeof schemaCellType>]> | undefined {
  const properties = (layout.def.nested?.[key]?.items as JsonSchema | undefined)?.properties as Record<string, JsonSchema> | undefined;
  const table = layout.def.nestedTables?.[key];
  if (!properties || !table) return undefined;
  const keys = Object.keys(table.columns);
  if (keys.some(misplaced)) return undefined;
  return keys.map((k) => [k, schemaCellType(properties[k])]);
}

/** `not exists` an element whose numbers PostgreSQL would write otherwise than JavaScript. */
function elementsInRange(table: NestedTable, alias: string, numberColumns: string[]): Expr | undefined {
  if (numberColumns.length === 0) return undefined;
  const outside = numberColumns.map((c) => sql<string>`not ${numberInRange(ref(`${alias}.${c}`))}`);
  return sql<string>`not exists (select 1 from ${sql.table(table.table)} as ${sql.raw(alias)} where ${ref(`${alias}.${table.parent}`)} = ${ref('t.id')} and (${sql.join(outside, sql` or `)}))`;
}

/**
 * Whether PostgreSQL can read JSON text's values as text: JSON.stringify escapes NUL (`\u0000`) and a lone
 * surrogate (`\ud800`), which a text cannot hold (PostgreSQL refuses to parse them into one): an export whose
 * objects hold either is JavaScript's to write. Upper-case hex too (a text stored by hand). Most texts hold no
 * `\u` at all, which `strpos` finds byte by byte: over the addresses of 100 000 orders 0.19 s against 0.32 s
 * for the regular expression alone (psql, three runs each; 0.06-0.09 s to count the rows).
 */
const parsable = (text: Expr): Expr =>
  sql<string>`(${text} is null or strpos(${text}, ${sql.raw(`'\\u'`)}) = 0 or ${text} !~* ${sql.raw(`'\\\\u(0000|d[89a-f])'`)})`;

const allOf = (conditions: Expr[]): Expr | undefined => (conditions.length ? sql<string>`(${sql.join(conditions, sql` and `)})` : undefined);

/** The NDJSON line of an item with nested arrays or JSON-text fields (without its LF, as pgLine's). */
function ndjsonLine(layout: ExportLayout): NestedLine | undefined {
  const names = lineEncoderNames(layout);
  if (!names) return undefined;
  const values: Expr[] = [];
  const ranges: Expr[] = [];
  for (const f of layout.shape.shown) {
    const column = ref(f.column);
    if (isJsonText(f)) {
      values.push(sql<string>`replace(replace(${column}, E'\\n', ''), E'\\r', '')`);
      continue;
    }
    const type = cellTypeOf(f);
    const value = type && jsonValue(type, column);
    if (!value) return undefined;
    if (type === 'number') ranges.push(numberInRange(column));
    values.push(value);
  }
  for (const [n, key] of layout.nestedKeys.entries()) {
    const table = layout.def.nestedTables?.[key];
    const types = elementTypes(layout, key);
    if (!table || !types) return undefined;
    const alias = `n${n}`;
    const parts: Expr[] = [];
    const numbers: string[] = [];
    for (const [i, [k, type]] of types.entries()) {
      const column = ref(`${alias}.${table.columns[k]}`);
      const value = jsonValue(type, column);
      if (!value) return undefined;
      if (type === 'number') numbers.push(table.columns[k]);
      parts.push(literal(`${i === 0 ? '{' : ','}${JSON.stringify(k)}:`), sql<string>`coalesce(${value}, 'null')`);
    }
    parts.push(literal('}'));
    const inRange = elementsInRange(table, `${alias}r`, numbers);
    if (inRange) ranges.push(inRange);
    values.push(sql<string>`coalesce((select '[' || string_agg(${joined(parts)}, ',' order by ${ref(`${alias}.${table.order}`)}) || ']' from ${sql.table(table.table)} as ${sql.raw(alias)} where ${ref(`${alias}.${table.parent}`)} = ${ref('t.id')}), '[]')`);
  }
  const parts: Expr[] = [];
  values.forEach((value, i) => parts.push(literal(`${i === 0 ? '{' : ','}${JSON.stringify(names[i])}:`), sql<string>`coalesce(${value}, 'null')`));
  parts.push(literal('}'));
  return { line: joined(parts), inRange: allOf(ranges) };
}

/**
 * The table of a layout's exploded nested array (`exportRowPer`): `{ table: undefined }` when nothing is exploded,
 * undefined when the exploded array has no table (JavaScript's to write).
 */
function explodedTable(layout: ExportLayout): { key?: string; table?: NestedTable } | undefined {
  if (layout.explodeSlot === undefined) return {};
  const key = layout.nestedKeys[layout.explodeSlot - layout.selected.length];
  const table = layout.def.nestedTables?.[key];
  return table ? { key, table } : undefined;
}

/**
 * The keys of JSON-text objects spread into columns (orders' addresses), read as text from each object parsed once
 * (`x.j<slot>`), for CSV's and XLSX's cells alike; each object's text must be `parsable`.
 */
class SpreadKeys {
  /** The objects read, by slot. */
  private readonly parsed = new Map<number, Field>();

  constructor(
    /** The conditions an export's rows must meet, which the first key read from each object adds to. */
    private readonly ranges: Expr[],
  ) {}

  /** The text of `key` of the object in `slot` (`f`). */
  key(slot: number, f: Field, key: string): Expr {
    if (!this.parsed.has(slot)) this.ranges.push(parsable(ref(f.column)));
    this.parsed.set(slot, f);
    return sql<string>`(${ref(`x.j${slot}`)} ->> ${literal(key)})`;
  }

  /**
   * The subquery that parses each object once, or undefined when no key is read. `offset 0` keeps it a step of its
   * own: pulled up into the query, each cast would be made again for every key read from it (XLSX: 14 parses per
   * order instead of 2, the COPY of 100 000 orders' own cells 5.3 s against 1.2-1.5 s).
   */
  subquery(): Expr | undefined {
    if (this.parsed.size === 0) return undefined;
    const casts = [...this.parsed].map(([slot, f]) => sql<string>`${ref(f.column)}::jsonb as ${sql.raw(`j${slot}`)}`);
    return sql<string>`(select ${sql.join(casts)} offset 0)`;
  }
}

/**
 * The cells of a CSV export of a layout with nested arrays or JSON-text fields (orders) for PostgreSQL's own CSV
 * writer, as pgCsvCells' are (each cell pgCsvCell's), read by CsvCopyReader with its item marker.
 */
export interface NestedCsvCells {
  /** The marker (`true` on an item's first record), then a cell per column. */
  cells: Expr[];
  inRange?: Expr;
  /** Lateral subqueries the cells read from, each with its alias, joined in order. */
  laterals: Array<{ query: Expr; alias: string }>;
  /** What orders an item's records after the listing's own order (its exploded elements' order). */
  order?: Expr;
}

/**
 * The CSV cells of an item of a layout with nested arrays or JSON-text fields, one record per element of its
 * exploded array (`exportRowPer`): the elements come from a lateral subquery left-joined to the item (`n`; an
 * item without elements keeps its one record, the element's cells empty), numbered in the table's order (`k`),
 * which orders the records within the item and marks the first; the item's own cells are repeated on each. An
 * object's keys are read from its text parsed once (`x`), where every value can be read as text (`parsable`).
 * One record per element rather than one row per item whose cell held all its lines: those lines quoted each text
 * by a regular expression and `replace`, which PostgreSQL's CSV writer does in C (see docs/benchmarks.md).
 */
export function pgNestedCsvCells(layout: ExportLayout, options: CsvOptions): NestedCsvCells | undefined {
  if (layout.identity || layout.includeKeys.length > 0 || options.spreadsheet || options.decimal === ',') return undefined;
  if (!layout.shape.shown.some(isJsonText) && layout.nestedKeys.length === 0) return undefined;
  const { shown } = layout.shape;
  const ranges: Expr[] = [];
  const spread = new SpreadKeys(ranges);
  const cells: Expr[] = [];
  /** The item's own cells, made once per item in a lateral subquery (`o`) and read on each of its records. */
  const own: Expr[] = [];
  const exploded = explodedTable(layout);
  if (!exploded) return undefined;
  const { table } = exploded;
  /** The element's columns the cells read, as the lateral subquery selects them. */
  const elementColumns = new Set<string>();
  const numbers: string[] = [];
  for (const c of layout.columns) {
    let cell: Expr | undefined;
    if (c.fromItem) {
      const column = table?.columns[c.key!];
      if (!column || c.type === 'json') return undefined;
      elementColumns.add(column);
      cell = pgCsvCell(c.type, ref(`n.${column}`), options);
      if (c.type === 'number') numbers.push(column);
    } else if (c.slot < shown.length) {
      const f = shown[c.slot];
      if (c.key === undefined) {
        const type = cellTypeOf(f);
        cell = type && pgCsvCell(type, ref(f.column), options);
        if (type === 'number') ranges.push(numberInRange(ref(f.column)));
      } else if (isJsonText(f) && c.type === 'string') {
        cell = pgCsvCell('string', spread.key(c.slot, f, c.key), options);
      }
    }
    // A nested value not exploded, an included relation: JavaScript's.
    if (!cell) return undefined;
    if (c.fromItem) cells.push(cell);
    else {
      cells.push(ref(`o.c${own.length}`));
      own.push(sql<string>`${cell} as ${sql.raw(`c${own.length}`)}`);
    }
  }
  // `offset 0` keeps the own cells a step of their own: pulled up into the query, each would be made again for every
  // element (over 100 000 orders' 249 518 items, the keys of two addresses read once per element cost PostgreSQL
  // about 1.6 s).
  const parse = spread.subquery();
  const from = parse ? sql<string>` from ${parse} as x` : sql<string>``;
  const laterals: NestedCsvCells['laterals'] = own.length ? [{ query: sql<string>`(select ${sql.join(own)}${from} offset 0)`, alias: 'o' }] : [];
  if (!table) return { cells: [sql<string>`true`, ...cells], laterals, ...(ranges.length ? { inRange: allOf(ranges) } : {}) };
  const inRange = elementsInRange(table, 'nr', numbers);
  if (inRange) ranges.push(inRange);
  const selected = [...elementColumns].map((column) => ref(`e.${column}`));
  const k = sql<string>`row_number() over (order by ${ref(`e.${table.order}`)})`;
  laterals.push({
    query: sql<string>`(select ${sql.join([...selected, sql<string>`${k} as k`])} from ${sql.table(table.table)} as e where ${ref(`e.${table.parent}`)} = ${ref('t.id')})`,
    alias: 'n',
  });
  return {
    cells: [sql<string>`coalesce(${ref('n.k')}, 1) = 1`, ...cells],
    laterals,
    order: ref('n.k'),
    ...(ranges.length ? { inRange: allOf(ranges) } : {}),
  };
}

/**
 * The line of an item of a layout with nested arrays or JSON-text fields for NDJSON, or undefined where it is
 * JavaScript's to write: a plain layout (pgJsonCells'), an include, a value it does not cover.
 */
export function pgNestedLine(layout: ExportLayout): NestedLine | undefined {
  if (layout.identity || layout.includeKeys.length > 0) return undefined;
  if (!layout.shape.shown.some(isJsonText) && layout.nestedKeys.length === 0) return undefined;
  return ndjsonLine(layout);
}

/** The binary format's null field, and the length of an int8's. */
const NULL_FIELD = sql.raw<string>(`decode('ffffffff', 'hex')`);
const INT8_LENGTH = sql.raw<string>(`decode('00000008', 'hex')`);

/** One field of an element in the binary format's framing (its 32-bit length, then its bytes), as XlsxCopyReader reads a row's. */
function elementField(cell: { cell: Expr; kind: XlsxKind }): Expr {
  if (cell.kind === XlsxKind.Int8) return sql<string>`coalesce(${INT8_LENGTH} || int8send(${cell.cell}), ${NULL_FIELD})`;
  const bytes = sql<string>`convert_to(${cell.cell}, 'UTF8')`;
  return sql<string>`coalesce(int4send(octet_length(${bytes})) || ${bytes}, ${NULL_FIELD})`;
}

/**
 * The cells of an XLSX export of a layout with an exploded nested array or objects spread into columns (orders),
 * for XlsxCopyReader, or undefined where it is JavaScript's to write (a plain layout is pgXlsxCells'; includes, a
 * nested value not exploded, a value of a type not covered). The exploded array's elements come as one last cell,
 * each element's fields in turn in the binary format's framing (`string_agg` of bytea in the table's order; null
 * for an item without elements, which keeps its one row); the objects' keys as text read from their JSON, each
 * parsed once in a lateral subquery. Numbers need no range check (the reader writes any as JavaScript does); the
 * JSON texts must be `parsable`.
 */
export function pgNestedXlsxCells(layout: ExportLayout): XlsxCells | undefined {
  if (layout.identity || layout.includeKeys.length > 0) return undefined;
  const { shown } = layout.shape;
  const exploded = explodedTable(layout);
  // A nested value other than the exploded array is a JSON cell: JavaScript's.
  if (!exploded || layout.nestedKeys.some((k) => k !== exploded.key)) return undefined;
  const { table } = exploded;
  const cells: Expr[] = [];
  const kinds: XlsxKind[] = [];
  const fields: Expr[] = [];
  const itemKinds: XlsxKind[] = [];
  const ranges: Expr[] = [];
  const spread = new SpreadKeys(ranges);
  for (const c of layout.columns) {
    if (c.fromItem) {
      // An element's property without a column of the table (the answer's schema only) is JavaScript's.
      const column = table?.columns[c.key!];
      const cell = column && xlsxCell(c.type, ref(`n.${column}`));
      if (!cell) return undefined;
      fields.push(elementField(cell));
      itemKinds.push(cell.kind);
      continue;
    }
    const f = shown[c.slot];
    if (!f) return undefined;
    if (c.key === undefined) {
      const cell = xlsxCell(cellTypeOf(f), ref(f.column));
      if (!cell) return undefined;
      cells.push(cell.cell);
      kinds.push(cell.kind);
    } else if (isJsonText(f) && c.type === 'string') {
      cells.push(spread.key(c.slot, f, c.key));
      kinds.push(XlsxKind.Text);
    } else return undefined;
  }
  if (table) {
    cells.push(sql<string>`(select string_agg(${joined(fields)}, ''::bytea order by ${ref(`n.${table.order}`)}) from ${sql.table(table.table)} as n where ${ref(`n.${table.parent}`)} = ${ref('t.id')})`);
  }
  const parse = spread.subquery();
  return {
    cells,
    kinds,
    ...(table ? { itemKinds } : {}),
    ...(ranges.length ? { inRange: allOf(ranges) } : {}),
    ...(parse ? { lateral: parse } : {}),
  };
}
