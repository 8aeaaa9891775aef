import type { JsonSchema } from '../listing/resource.ts';
import { ADDRESS_FIELDS, ITEM_FIELDS } from '../modules/orders/resource.ts';
import type { Input, WritableResource } from '../modules/writer.ts';
import { cellValue, objectFrom, READ_ONLY_COLUMNS, type CsvRow } from './cells.ts';
import type { LineIssue, SourceRecord } from './source.ts';

/*
 * Orders in CSV: one row per order item, the order's own columns repeated on each row of the order, the same
 * flattening as the CSV export, so an export imports back. Addresses are spread into `billingAddress.city`…
 * columns and items into `items.name`… columns. The rows of one order are consecutive and share `number` (or
 * `id`); a row with neither is an order of its own. Order columns left empty on later rows of an order are
 * fine; different values are not. Empty `shippingAddress.*` cells mean no separate shipping address.
 */
const ORDER_COLUMNS = ['id', 'number', 'status', 'email', 'customerName', 'currency', 'subtotal', 'shippingTotal', 'taxTotal', 'total', 'createdAt', 'updatedAt'];
const BILLING = Object.fromEntries(ADDRESS_FIELDS.map((f) => [`billingAddress.${f}`, f]));
const SHIPPING = Object.fromEntries(ADDRESS_FIELDS.map((f) => [`shippingAddress.${f}`, f]));
const ITEM = Object.fromEntries(ITEM_FIELDS.map((f) => [`items.${f}`, f]));

export const ORDER_CSV_COLUMNS = [...ORDER_COLUMNS, ...Object.keys(BILLING), ...Object.keys(SHIPPING), ...Object.keys(ITEM)];
const REPEATED = [...ORDER_COLUMNS, ...Object.keys(BILLING), ...Object.keys(SHIPPING)];

const keyOf = (row: CsvRow) => row.cells.id || row.cells.number || '';
const allEmpty = (cells: Record<string, string>, columns: Record<string, string>) => Object.keys(columns).every((c) => !cells[c]);
const hasAny = (cells: Record<string, string>, columns: Record<string, string>) => Object.keys(columns).some((c) => c in cells);

function address(cells: Record<string, string>, columns: Record<string, string>, schema: JsonSchema, emptyMeans: null | undefined): unknown {
  if (!hasAny(cells, columns)) return undefined;
  if (allEmpty(cells, columns)) return emptyMeans;
  const out: Input = {};
  for (const [column, field] of Object.entries(columns)) {
    const value = cellValue(cells[column] ?? '', (schema.properties as Record<string, JsonSchema>)[field]);
    if (value !== undefined) out[field] = value;
  }
  return out;
}

function orderOf(rows: CsvRow[], w: WritableResource): SourceRecord {
  const properties = w.createSchema.properties as Record<string, JsonSchema>;
  const itemProperties = (properties.items.items as JsonSchema).properties as Record<string, JsonSchema>;
  const [first] = rows;
  const issues: LineIssue[] = [];
  for (const row of rows.slice(1)) {
    for (const column of REPEATED) {
      const cell = row.cells[column];
      if (cell && cell !== (first.cells[column] ?? '')) issues.push({ line: row.line, field: column, reason: `differs from line ${first.line}; the rows of one order repeat its columns` });
    }
  }
  const orderColumns = Object.fromEntries(ORDER_COLUMNS.filter((c) => !READ_ONLY_COLUMNS.includes(c) || c === 'id').map((c) => [c, c]));
  const record: Input = objectFrom(first.cells, orderColumns, properties);
  const billing = address(first.cells, BILLING, properties.billingAddress, undefined);
  if (billing !== undefined) record.billingAddress = billing;
  const shipping = address(first.cells, SHIPPING, properties.shippingAddress, null);
  if (shipping !== undefined) record.shippingAddress = shipping;
  const itemRows = rows.filter((r) => !allEmpty(r.cells, ITEM));
  if (itemRows.length) record.items = itemRows.map((r) => objectFrom(r.cells, ITEM, itemProperties));
  const lineOf = (field: string) => {
    const m = /^items\.(\d+)/.exec(field);
    return m && itemRows[Number(m[1])] ? itemRows[Number(m[1])].line : first.line;
  };
  return { line: first.line, record, issues, lineOf };
}

/** Groups consecutive item rows into orders. `checkHeader` returns a problem with the columns, if any. */
export async function* orderRecords(rows: AsyncIterable<CsvRow>, w: WritableResource, checkHeader: (columns: string[]) => string | undefined): AsyncGenerator<SourceRecord> {
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
      yield orderOf(group, w);
      group = [];
    }
    group.push(row);
  }
  if (group.length) yield orderOf(group, w);
}
