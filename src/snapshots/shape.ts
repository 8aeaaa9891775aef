import { AppError } from '../errors/app-error.ts';
import type { ExportColumn, ExportLayout, ExportRecord } from '../listing/formats/columns.ts';
import type { ResourceDef, Row } from '../listing/resource.ts';

/** The names `fields` may hold for a collection: its fields and its nested values (order items). */
export function fieldNames(def: ResourceDef): string[] {
  return [...def.fields.map((f) => f.name), ...Object.keys(def.nested ?? {})];
}

/** Checks `fields` against the collection (400 naming the unknown ones); `id` is always kept. Null: every field. */
export function checkFields(def: ResourceDef, fields: readonly string[] | undefined): string[] | null {
  if (fields === undefined) return null;
  const known = new Set(fieldNames(def));
  const unknown = fields.filter((f) => !known.has(f));
  if (unknown.length) {
    throw new AppError('invalid_body', `fields has names that ${def.collection} does not have: ${unknown.join(', ')}.`, {
      errors: unknown.map((name) => ({ name: 'fields', reason: `"${name}" is not a field of ${def.collection} (${fieldNames(def).join(', ')})` })),
    });
  }
  return ['id', ...new Set(fields.filter((f) => f !== 'id'))];
}

/** Turns a record of the export (fields in order, then nested values) into the item the JSON listing shows, kept to `fields`. */
export function itemMaker(layout: ExportLayout, fields: string[] | null): (record: ExportRecord) => Row {
  const names = [...layout.def.fields.map((f) => f.name), ...layout.nestedKeys];
  const slots = names.map((name, slot) => ({ name, slot })).filter((s) => !fields || fields.includes(s.name));
  return (record) => {
    const item: Row = {};
    for (const s of slots) item[s.name] = record[s.slot];
    return item;
  };
}

/** The CSV/XLSX columns kept for `fields` (a column of a nested value is kept with it), and their positions among all. */
export function keptColumns(layout: ExportLayout, fields: string[] | null): { columns: ExportColumn[]; positions: number[] | null } {
  if (!fields) return { columns: layout.columns, positions: null };
  const positions = layout.columns.flatMap((c, i) => (fields.includes(c.name.split('.')[0]) ? [i] : []));
  return { columns: positions.map((i) => layout.columns[i]), positions };
}
