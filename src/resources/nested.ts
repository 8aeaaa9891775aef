import { arraysThrough, type Executor } from '../db/database.ts';
import { loose } from './loose.ts';
import type { JsonSchema, NestedTable, ReadArrays, Row } from './types.ts';

/**
 * `attach` of a resource whose nested arrays live in tables (`nestedTables`): for a page of rows, one query per
 * array reads the elements of every row, and each row gets its array in the table's order (empty when it has
 * none). An element's keys come in `columns`' order, its values as the driver gives them.
 */
export function attachNested(tables: Readonly<Record<string, NestedTable>>): (db: Executor, rows: Row[], read?: ReadArrays) => Promise<void> {
  const entries = Object.entries(tables).map(([name, t]) => ({ name, t, keys: Object.keys(t.columns), columns: Object.values(t.columns) }));
  return async (db, rows, read = arraysThrough(db)) => {
    if (rows.length === 0) return;
    const ids = rows.map((r) => r.id as number);
    for (const { name, t, keys, columns } of entries) {
      const query = loose(db).selectFrom(t.table).select([t.parent, ...columns]).where(t.parent, 'in', ids).orderBy(t.parent).orderBy(t.order).compile();
      const byParent = new Map<number, Row[]>();
      for (const r of await read(query)) {
        const parent = r[0] as number;
        let list = byParent.get(parent);
        if (!list) byParent.set(parent, (list = []));
        // A loop rather than Object.fromEntries of pairs: this runs for every element an export reads.
        const element: Row = {};
        for (let k = 0; k < keys.length; k++) element[keys[k]] = r[k + 1];
        list.push(element);
      }
      for (const row of rows) row[name] = byParent.get(row.id as number) ?? [];
    }
  };
}

/**
 * Checks a nested table against the `nested` schema it stores: an array of objects whose properties are the
 * table's `columns`, in the same order (an element's keys are written in `columns`' order, the JSON answer's
 * in the schema's).
 */
export function checkNestedTable(collection: string, name: string, schema: JsonSchema | undefined, t: NestedTable): void {
  const properties = (schema?.items as JsonSchema | undefined)?.properties as Record<string, JsonSchema> | undefined;
  if (!properties) throw new Error(`${collection}: nested table ${name} stores no nested array of objects`);
  const declared = Object.keys(properties).join(',');
  if (declared !== Object.keys(t.columns).join(',')) throw new Error(`${collection}: nested table ${name} has the columns ${Object.keys(t.columns).join(',')}, its schema the properties ${declared}`);
}
