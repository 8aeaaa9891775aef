import { isMoneySchema } from '../../money.ts';
import type { Field, JsonSchema, Resource as ResourceDef, Row } from '../../resources/types.ts';
import { resolveShape, type ResolvedShape } from '../shape.ts';

/** How a cell is written: CSV prints every type as JSON shows it; XLSX stores numbers, money and dates as numbers. */
export type CellType = 'integer' | 'number' | 'money' | 'datetime' | 'string' | 'json';

/**
 * One column of a CSV/XLSX export, derived from the resource's declaration. Its value lives in a record
 * (an array: the declared fields in order, then the `nested` values): in `slot`, under `key` when the slot
 * holds an object, or in the exploded nested element when `fromItem` is set.
 */
export interface ExportColumn {
  /** The header: the JSON name; a nested value is its JSON path with dots (`billingAddress.city`, `items.total`). */
  name: string;
  type: CellType;
  description?: string;
  slot: number;
  key?: string;
  fromItem?: boolean;
}

export interface ExportLayout {
  def: ResourceDef;
  shape: ResolvedShape;
  /** The fields a record holds first, in select order: the shown ones, then the hidden ones. */
  selected: Field[];
  columns: ExportColumn[];
  /** The names of the nested values asked, in slot order after the fields. */
  nestedKeys: string[];
  /** The names of the included relations, in slot order after the nested values. */
  includeKeys: string[];
  /** The slot of the nested array that gives one row per element (orders: items). */
  explodeSlot?: number;
  /** True when a record is already the row of cells (no objects to spread, nothing nested): the fast path. */
  identity: boolean;
}

/** A record: the values of the selected fields in order (decoded), then the nested values (attached), then the included relations. */
export type ExportRecord = unknown[];

const typeOf = (s: JsonSchema): string | undefined => {
  const t = s.type;
  return Array.isArray(t) ? (t as string[]).find((x) => x !== 'null') : (t as string | undefined);
};

/** The cell type of a value its JSON Schema describes (a nested element's property, an object field's key). */
export function schemaCellType(s: JsonSchema): CellType {
  const t = typeOf(s);
  if (t === 'integer') return 'integer';
  if (t === 'number') return 'number';
  if (t === 'string') return isMoneySchema(s) ? 'money' : s.format === 'date-time' ? 'datetime' : 'string';
  return 'json';
}

function fieldCellType(f: Field): CellType {
  switch (f.type) {
    case 'id':
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'money':
      return 'money';
    case 'datetime':
      return 'datetime';
    case 'enum':
    case 'string':
      return 'string';
    default:
      return 'json';
  }
}

const propertiesOf = (s: JsonSchema | undefined): Record<string, JsonSchema> | undefined =>
  s && typeOf(s) === 'object' ? (s.properties as Record<string, JsonSchema> | undefined) : undefined;

/** Columns for a value at `slot`: an object with declared properties spreads into prefixed columns. */
function columnsFor(name: string, slot: number, type: CellType, schema: JsonSchema | undefined, description: string | undefined): ExportColumn[] {
  const properties = type === 'json' ? propertiesOf(schema) : undefined;
  if (!properties) return [{ name, type, description, slot }];
  return Object.entries(properties).map(([key, s]) => ({
    name: `${name}.${key}`,
    type: schemaCellType(s),
    description: (s.description as string | undefined) ?? `${key} of ${name}`,
    slot,
    key,
  }));
}

// Shapes come from clients: the layouts kept per resource are bounded.
const MAX_LAYOUTS = 100;
const layouts = new WeakMap<ResourceDef, Map<string, ExportLayout>>();

/**
 * The export columns of a resource in a shape (every field by default), derived from its declaration: a new
 * resource gets CSV and XLSX for free. An included object spreads into prefixed columns (`brand.name`); an
 * included array is one column holding it as JSON (`parameters`).
 */
export function exportLayout(def: ResourceDef, shape: ResolvedShape = resolveShape(def, undefined)): ExportLayout {
  let byShape = layouts.get(def);
  if (!byShape) layouts.set(def, (byShape = new Map()));
  const cached = byShape.get(shape.key);
  if (cached) return cached;
  const selected = [...shape.shown, ...shape.hidden];
  const columns: ExportColumn[] = [];
  shape.shown.forEach((f, slot) => columns.push(...columnsFor(f.name, slot, fieldCellType(f), f.schema, f.description)));
  const nestedKeys = shape.nested;
  let explodeSlot: number | undefined;
  const trailing: ExportColumn[] = [];
  nestedKeys.forEach((key, i) => {
    const slot = selected.length + i;
    const schema = def.nested![key];
    const itemProperties = key === def.exportRowPer ? propertiesOf(schema.items as JsonSchema | undefined) : undefined;
    if (itemProperties) {
      explodeSlot = slot;
      for (const [prop, s] of Object.entries(itemProperties)) {
        trailing.push({ name: `${key}.${prop}`, type: schemaCellType(s), description: s.description as string | undefined, slot, key: prop, fromItem: true });
      }
    } else {
      columns.push(...columnsFor(key, slot, schemaCellType(schema), schema, schema.description as string | undefined));
    }
  });
  const includeKeys = shape.includes.map((inc) => inc.name);
  shape.includes.forEach((inc, i) => {
    const slot = selected.length + nestedKeys.length + i;
    if (inc.declaration.kind !== 'one') {
      columns.push({ name: inc.name, type: 'json', description: `${inc.declaration.description} (JSON array)`, slot });
      return;
    }
    for (const f of inc.fields) columns.push({ name: `${inc.name}.${f.name}`, type: fieldCellType(f), description: f.description ?? `${f.name} of ${inc.name}`, slot, key: f.name });
  });
  // The exploded item's columns come last, so that the columns of the parent read first on every row.
  columns.push(...trailing);
  // Hidden fields sit after the shown ones: a row of cells may be longer than the columns (the writers stop at the last column).
  const identity = nestedKeys.length === 0 && includeKeys.length === 0 && columns.every((c, i) => c.slot === i && c.key === undefined);
  const layout: ExportLayout = { def, shape, selected, columns, nestedKeys, includeKeys, explodeSlot, identity };
  if (byShape.size >= MAX_LAYOUTS) byShape.delete(byShape.keys().next().value as string);
  byShape.set(shape.key, layout);
  return layout;
}

/** A record of an item as the JSON answer has it (paged exports start from `listPage`). */
export function recordOf(layout: ExportLayout, item: Row): ExportRecord {
  const record: ExportRecord = layout.selected.map((f) => item[f.name]);
  for (const k of layout.nestedKeys) record.push(item[k]);
  for (const k of layout.includeKeys) record.push(item[k]);
  return record;
}

/** The item of a record, as the JSON answer has it (NDJSON lines): the shown fields, the nested values, the includes. */
export function itemOf(layout: ExportLayout, record: ExportRecord): Row {
  const item: Row = {};
  const { shown } = layout.shape;
  for (let i = 0; i < shown.length; i++) item[shown[i].name] = record[i];
  let slot = layout.selected.length;
  for (const k of layout.nestedKeys) item[k] = record[slot++];
  for (const k of layout.includeKeys) item[k] = record[slot++];
  return item;
}

/** Turns records into rows of cells, one per column: objects spread, the exploded array gives a row per element. */
export function flatten(layout: ExportLayout, records: ExportRecord[]): unknown[][] {
  if (layout.identity) return records;
  const { columns, explodeSlot } = layout;
  const rows: unknown[][] = [];
  const cellsOf = (record: ExportRecord, item: Row | undefined): unknown[] =>
    columns.map((c) => {
      if (c.fromItem) return item?.[c.key!] ?? null;
      const value = record[c.slot];
      if (c.key === undefined) return value;
      return value === null || value === undefined ? null : ((value as Row)[c.key] ?? null);
    });
  for (const record of records) {
    const items = explodeSlot === undefined ? undefined : (record[explodeSlot] as Row[] | undefined);
    // An order without items still gets its row, with empty item columns: no order disappears from an export.
    if (!items || items.length === 0) rows.push(cellsOf(record, undefined));
    else for (const item of items) rows.push(cellsOf(record, item));
  }
  return rows;
}
