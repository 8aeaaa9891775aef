import type { Input, JsonSchema, Resource } from '../resources/types.ts';
import { cellValue, objectFrom, READ_ONLY_COLUMNS, type CsvRow } from './cells.ts';
import type { LineIssue, SourceRecord } from './records.ts';

/*
 * A resource with `exportRowPer` (orders) in CSV: one row per nested element (order item), the item's own
 * columns repeated on each row of the item, the same flattening as the CSV export, so an export imports back.
 * Object fields are spread into `billingAddress.city`… columns and the nested elements into `items.name`…
 * columns. The rows of one item are consecutive and share `id` (or the natural key); a row with neither is an
 * item of its own. Repeated columns left empty on later rows of an item are fine; different values are not.
 * Empty cells of a nullable object field (`shippingAddress.*`) mean null.
 */

interface Spread {
  field: string;
  /** CSV column → the object's property. */
  columns: Record<string, string>;
  /** What all-empty cells mean: null for a nullable field, absent otherwise. */
  empty: null | undefined;
}

export interface GroupedLayout {
  /** Columns of the item's own scalar fields (and the read-only ones an export carries). */
  plain: string[];
  spreads: Spread[];
  /** The nested array that gives one row per element, and its columns. */
  nested: { key: string; columns: Record<string, string> };
  /** Every column a file may have, in the export's order. */
  all: string[];
  /** The field besides `id` whose cell ties the rows of one item together (a single-field natural key). */
  keyField?: string;
}

const propertiesOf = (s: JsonSchema | undefined): Record<string, JsonSchema> | undefined => s?.properties as Record<string, JsonSchema> | undefined;
const columnsOf = (prefix: string, properties: Record<string, JsonSchema>) => Object.fromEntries(Object.keys(properties).map((p) => [`${prefix}.${p}`, p]));

const layouts = new WeakMap<Resource, GroupedLayout>();

/** The CSV columns of a resource exported one row per nested element, from its declaration. */
export function groupedLayout(r: Resource): GroupedLayout {
  let layout = layouts.get(r);
  if (layout) return layout;
  const key = r.exportRowPer!;
  const spreadFields = r.fields.filter((f) => f.type === 'object' && propertiesOf(f.schema));
  const plain = r.fields.filter((f) => !spreadFields.includes(f)).map((f) => f.name);
  const spreads = spreadFields.map((f) => ({ field: f.name, columns: columnsOf(f.name, propertiesOf(f.schema)!), empty: f.nullable ? null : undefined }));
  const nested = { key, columns: columnsOf(key, propertiesOf(r.nested![key].items as JsonSchema)!) };
  const all = [...plain, ...spreads.flatMap((s) => Object.keys(s.columns)), ...Object.keys(nested.columns)];
  const keyField = Array.isArray(r.naturalKey) && r.naturalKey.length === 1 ? (r.naturalKey[0] as string) : undefined;
  layout = { plain, spreads, nested, all, keyField };
  layouts.set(r, layout);
  return layout;
}

const allEmpty = (cells: Record<string, string>, columns: Record<string, string>) => Object.keys(columns).every((c) => !cells[c]);
const hasAny = (cells: Record<string, string>, columns: Record<string, string>) => Object.keys(columns).some((c) => c in cells);

function spreadValue(cells: Record<string, string>, spread: Spread, schema: JsonSchema): unknown {
  if (!hasAny(cells, spread.columns)) return undefined;
  if (allEmpty(cells, spread.columns)) return spread.empty;
  const out: Input = {};
  for (const [column, property] of Object.entries(spread.columns)) {
    const value = cellValue(cells[column] ?? '', propertiesOf(schema)![property]);
    if (value !== undefined) out[property] = value;
  }
  return out;
}

function recordOf(rows: CsvRow[], r: Resource, layout: GroupedLayout): SourceRecord {
  const properties = r.createSchema.properties as Record<string, JsonSchema>;
  const elementProperties = propertiesOf(properties[layout.nested.key].items as JsonSchema)!;
  const repeated = [...layout.plain, ...layout.spreads.flatMap((s) => Object.keys(s.columns))];
  const [first] = rows;
  const issues: LineIssue[] = [];
  for (const row of rows.slice(1)) {
    for (const column of repeated) {
      const cell = row.cells[column];
      if (cell && cell !== (first.cells[column] ?? '')) issues.push({ line: row.line, field: column, reason: `differs from line ${first.line}; the rows of one ${r.title.toLowerCase()} repeat its columns` });
    }
  }
  const own = Object.fromEntries(layout.plain.filter((c) => !READ_ONLY_COLUMNS.includes(c) || c === 'id').map((c) => [c, c]));
  const record: Input = objectFrom(first.cells, own, properties);
  for (const spread of layout.spreads) {
    const value = spreadValue(first.cells, spread, properties[spread.field]);
    if (value !== undefined) record[spread.field] = value;
  }
  const elementRows = rows.filter((row) => !allEmpty(row.cells, layout.nested.columns));
  if (elementRows.length) record[layout.nested.key] = elementRows.map((row) => objectFrom(row.cells, layout.nested.columns, elementProperties));
  const at = new RegExp(`^${layout.nested.key}\\.(\\d+)`);
  const lineOf = (field: string) => {
    const m = at.exec(field);
    return m && elementRows[Number(m[1])] ? elementRows[Number(m[1])].line : first.line;
  };
  return { line: first.line, record, issues, lineOf };
}

/** Groups consecutive rows of one item (an order and its items). `checkHeader` returns a problem with the columns, if any. */
export async function* groupedRecords(rows: AsyncIterable<CsvRow>, r: Resource, checkHeader: (columns: string[]) => string | undefined): AsyncGenerator<SourceRecord> {
  const layout = groupedLayout(r);
  const keyOf = (row: CsvRow) => row.cells.id || (layout.keyField && row.cells[layout.keyField]) || '';
  let group: CsvRow[] = [];
  let first = true;
  for await (const row of rows) {
    if (first) {
      first = false;
      const problem = checkHeader(Object.keys(row.cells));
      if (problem) {
        yield { line: 1, issues: [{ line: 1, reason: problem }], fatal: true };
        return;
      }
    }
    if (group.length && (keyOf(row) === '' || keyOf(row) !== keyOf(group[0]))) {
      yield recordOf(group, r, layout);
      group = [];
    }
    group.push(row);
  }
  if (group.length) yield recordOf(group, r, layout);
}
