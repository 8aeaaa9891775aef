import type { Dialect, Trx } from '../db/database.ts';
import type { Row } from '../listing/resource.ts';
import { moveAside, rowsWhereIn, upsertById } from './rows.ts';
import type { RefTable } from './mirrors.ts';

/**
 * Parameter and filter definitions (tables parameters, filters, filter_values) are not resources of the API:
 * the follower derives them, with the main store's ids, from the values that name them.
 */
interface Definition {
  table: RefTable;
  /** The definition a value item names, or undefined when the item does not name one. */
  of(item: Row, now: string): Record<string, unknown> & { id: number };
  /** Columns that tell whether a stored definition already matches. */
  compare: string[];
  /** Unique columns, alone or together with a scope column. */
  unique: { column: string; scope?: string };
}

const parameter: Definition = {
  table: 'parameters',
  of: (i, now) => ({ id: Number(i.parameterId), name: String(i.parameterName), unit: i.unit === undefined ? null : i.unit, created_at: now }),
  compare: ['name', 'unit'],
  unique: { column: 'name' },
};

const filter: Definition = {
  table: 'filters',
  of: (i, now) => ({ id: Number(i.filterId), name: String(i.filterName), created_at: now }),
  compare: ['name'],
  unique: { column: 'name' },
};

const filterValue: Definition = {
  table: 'filter_values',
  of: (i, now) => ({ id: Number(i.valueId), filter_id: Number(i.filterId), value: String(i.value), created_at: now }),
  compare: ['filter_id', 'value'],
  unique: { column: 'value', scope: 'filter_id' },
};

export const DEFINITIONS: Record<string, Definition[]> = {
  'product-parameters': [parameter],
  'product-filters': [filter, filterValue],
};

const same = (a: unknown, b: unknown): boolean => String(a ?? '') === String(b ?? '') && (a === null) === (b === null);

/** Creates or corrects the definitions the given value items name; a different local definition with the same name is moved aside. */
export async function upsertDefinitions(trx: Trx, dialect: Dialect, collection: string, items: Row[], now: string): Promise<void> {
  for (const d of DEFINITIONS[collection] ?? []) {
    const wanted = new Map<number, Record<string, unknown> & { id: number }>();
    for (const item of items) {
      const def = d.of(item, now);
      if (def.id > 0) wanted.set(def.id, def);
    }
    if (wanted.size === 0) continue;
    const stored = new Map((await rowsWhereIn(trx, d.table, 'id', [...wanted.keys()], ['id', ...d.compare])).map((r) => [Number(r.id), r]));
    const changed = [...wanted.values()].filter((w) => {
      const s = stored.get(w.id);
      return !s || d.compare.some((c) => !same(s[c], w[c]));
    });
    if (changed.length === 0) continue;
    const { column, scope } = d.unique;
    const holders = await rowsWhereIn(trx, d.table, column, changed.map((c) => c[column]), ['id', column, ...(scope ? [scope] : [])]);
    const key = (r: Record<string, unknown>) => `${scope ? `${String(r[scope])}\u0000` : ''}${String(r[column])}`;
    const owner = new Map(changed.map((c) => [key(c), c.id]));
    const clashing = holders.filter((h) => owner.has(key(h)) && owner.get(key(h)) !== Number(h.id)).map((h) => Number(h.id));
    if (clashing.length) await moveAside(trx, d.table, column, clashing);
    // created_at of a definition is not shown by the API: an existing row keeps its own.
    await upsertById(trx, dialect, d.table, changed, ['created_at']);
  }
}
