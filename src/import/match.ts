import type { WriteContext } from '../events/log.ts';
import { getOne } from '../listing/engine.ts';
import { loose } from '../resources/loose.ts';
import type { Input, Resource, Row } from '../resources/types.ts';

/** A natural key's part as the record gives it: a non-empty text, or a positive id. */
const keyValue = (v: unknown): string | number | undefined =>
  (typeof v === 'string' && v !== '') || (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) ? v : undefined;

/**
 * The id of the existing item a record without `id` stands for, by the natural key its declaration names
 * (a product's articleNumber, an order's number, a brand's slug or name, a product's value of a parameter…).
 */
async function idByNaturalKey(w: WriteContext, r: Resource, record: Input): Promise<number | undefined> {
  const key = r.naturalKey;
  if (key === undefined) return undefined;
  if (typeof key === 'function') return key(w, record);
  let q = loose(w.trx).selectFrom(r.table).select('id');
  for (const name of key) {
    const value = keyValue(record[name]);
    const column = r.fields.find((f) => f.name === name)?.stored;
    if (value === undefined || column === undefined) return undefined;
    q = q.where(column, '=', value);
  }
  const row = await q.executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

/** The item a record updates: the one with its `id`, or else the one with its natural key; none means create. */
export async function findExisting(w: WriteContext, r: Resource, id: number | undefined, record: Input): Promise<Row | undefined> {
  const target = id ?? (await idByNaturalKey(w, r, record));
  return target === undefined ? undefined : getOne(w.trx, r, target);
}
