import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Field, LooseQuery, Row } from '../resources/types.ts';
import type { ResolvedInclude } from './shape.ts';

/** Selects fields by their API names (the aliases every answer uses). */
export const selectAs = (q: LooseQuery, fields: readonly Field[]): LooseQuery => q.select(fields.map((f) => sql.ref(f.column).as(f.name)));

/** Turns stored values into API values (JSON text into objects) for these fields. */
export function decodeFields(fields: readonly Field[], rows: Row[]): void {
  const decoders = fields.filter((f) => f.decode);
  if (decoders.length === 0) return;
  for (const row of rows) for (const f of decoders) row[f.name] = f.decode!(row[f.name]);
}

/** The alias of the column that says which item an embedded row belongs to (no API name starts with `_`). */
const OWNER = '_owner';
const LINK = 'include_link';

const idsOf = (values: unknown[]): number[] => [...new Set(values.filter((v) => v !== null && v !== undefined).map(Number))];

function grouped(rows: Row[]): Map<number, Row[]> {
  const byOwner = new Map<number, Row[]>();
  for (const row of rows) {
    const owner = Number(row[OWNER]);
    delete row[OWNER];
    let list = byOwner.get(owner);
    if (!list) byOwner.set(owner, (list = []));
    // A product on two lines of one order is embedded once.
    if (!list.some((r) => r.id === row.id)) list.push(row);
  }
  return byOwner;
}

/** Loads one included relation for a page (or an export batch) of items in one query, and embeds it in each. */
async function loadInclude(db: Executor, inc: ResolvedInclude, items: Row[]): Promise<void> {
  const d = inc.declaration;
  const target = d.target;
  if (d.kind === 'one') {
    const ids = idsOf(items.map((r) => r[d.field]));
    const found = ids.length ? ((await selectAs(target.from(db), inc.fields).where('t.id', 'in', ids).execute()) as Row[]) : [];
    decodeFields(inc.fields, found);
    const byId = new Map(found.map((r) => [Number(r.id), r]));
    for (const item of items) item[inc.name] = item[d.field] === null || item[d.field] === undefined ? null : (byId.get(Number(item[d.field])) ?? null);
    return;
  }
  const ids = idsOf(items.map((r) => r.id));
  let rows: Row[] = [];
  if (ids.length) {
    let q: LooseQuery;
    if (d.kind === 'many') {
      const by = target.fields.find((f) => f.name === d.by)!;
      q = selectAs(target.from(db), inc.fields).select(sql.ref(by.column).as(OWNER)).where(by.column, 'in', ids);
    } else {
      q = selectAs(target.from(db).innerJoin(`${d.table} as ${LINK}`, `${LINK}.${d.to}`, 't.id'), inc.fields)
        .select(sql.ref(`${LINK}.${d.from}`).as(OWNER))
        .where(`${LINK}.${d.from}`, 'in', ids);
    }
    rows = (await q.orderBy('t.id').execute()) as Row[];
  }
  decodeFields(inc.fields, rows);
  const byOwner = grouped(rows);
  for (const item of items) item[inc.name] = byOwner.get(Number(item.id)) ?? [];
}

/** Embeds every included relation in the items: one query per relation, whatever the number of items. */
export async function loadIncludes(db: Executor, includes: readonly ResolvedInclude[], items: Row[]): Promise<void> {
  if (items.length === 0) return;
  for (const inc of includes) await loadInclude(db, inc, items);
}
