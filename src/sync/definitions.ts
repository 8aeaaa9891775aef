import type { Dialect, Trx } from '../db/database.ts';
import type { MirrorLookup, Row } from '../resources/types.ts';
import { moveAside, rowsWhereIn, upsertById } from './rows.ts';

/*
 * Lookup tables that are no resources of the API (parameters, filters, filter_values): the follower derives
 * their rows, with the main store's ids, from the values that name them (the declarations' `lookups`).
 */

const same = (a: unknown, b: unknown): boolean => String(a ?? '') === String(b ?? '') && (a === null) === (b === null);

/** Creates or corrects the lookup rows the given items name; a different local row with the same unique value is moved aside. */
export async function upsertDefinitions(trx: Trx, dialect: Dialect, lookups: readonly MirrorLookup[], items: Row[], now: string): Promise<void> {
  for (const d of lookups) {
    const wanted = new Map<number, Record<string, unknown> & { id: number }>();
    for (const item of items) {
      const def = d.of(item, now);
      if (def.id > 0) wanted.set(def.id, def);
    }
    if (wanted.size === 0) continue;
    const stored = new Map((await rowsWhereIn(trx, dialect, d.table, 'id', [...wanted.keys()], ['id', ...d.compare])).map((r) => [Number(r.id), r]));
    const changed = [...wanted.values()].filter((w) => {
      const s = stored.get(w.id);
      return !s || d.compare.some((c) => !same(s[c], w[c]));
    });
    if (changed.length === 0) continue;
    const { column, scope } = d.unique;
    const holders = await rowsWhereIn(trx, dialect, d.table, column, changed.map((c) => c[column]), ['id', column, ...(scope ? [scope] : [])]);
    const key = (r: Record<string, unknown>) => `${scope ? `${String(r[scope])}\u0000` : ''}${String(r[column])}`;
    const owner = new Map(changed.map((c) => [key(c), c.id]));
    const clashing = holders.filter((h) => owner.has(key(h)) && owner.get(key(h)) !== Number(h.id)).map((h) => Number(h.id));
    if (clashing.length) await moveAside(trx, d.table, column, clashing);
    // created_at of a lookup row is not shown by the API: an existing row keeps its own.
    await upsertById(trx, dialect, d.table, changed, ['created_at']);
  }
}
