import { AppError } from '../../errors/app-error.ts';
import type { WriteContext } from '../../events/log.ts';
import { idListFilter } from '../../listing/filters.ts';
import { defineResource } from '../../resources/define.ts';
import type { Input, Row } from '../../resources/types.ts';
import { createdAtField, ID_BOUNDS, idField, updatedAtField } from '../common-fields.ts';

export async function filterIdByName(w: WriteContext, name: string): Promise<number> {
  const found = await w.trx.selectFrom('filters').select('id').where('name', '=', name).executeTakeFirst();
  if (found) return Number(found.id);
  return Number((await w.trx.insertInto('filters').values({ name, created_at: w.now }).returning('id').executeTakeFirstOrThrow()).id);
}

export async function filterValueId(w: WriteContext, filterId: number, value: string): Promise<number> {
  const found = await w.trx.selectFrom('filter_values').select('id').where('filter_id', '=', filterId).where('value', '=', value).executeTakeFirst();
  if (found) return Number(found.id);
  return Number((await w.trx.insertInto('filter_values').values({ filter_id: filterId, value, created_at: w.now }).returning('id').executeTakeFirstOrThrow()).id);
}

const conflict = (name: string, reason: string) => new AppError('conflict', `${name} ${reason}.`, { errors: [{ name, reason }] });
const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);

/** Resolves names to ids and checks that the value belongs to the filter. */
async function resolve(w: WriteContext, input: Input, existing: Row | undefined): Promise<Input> {
  let filterId = (input.filterId as number | undefined) ?? (existing?.filterId as number | undefined);
  if (filterId === undefined && typeof input.filterName === 'string') filterId = await filterIdByName(w, input.filterName);
  let valueId = input.valueId as number | undefined;
  if (valueId !== undefined) {
    const value = await w.trx.selectFrom('filter_values').select('filter_id').where('id', '=', valueId).executeTakeFirst();
    if (!value) throw conflict('valueId', `filter value ${valueId} does not exist`);
    if (filterId !== undefined && Number(value.filter_id) !== filterId) throw conflict('valueId', `is not a value of filter ${filterId}`);
    filterId = Number(value.filter_id);
  } else if (typeof input.value === 'string') {
    if (filterId === undefined) throw new AppError('invalid_body', 'A value given by text needs filterId or filterName.', { errors: [{ name: 'filterId', reason: 'is required with value' }] });
    const filter = await w.trx.selectFrom('filters').select('id').where('id', '=', filterId).executeTakeFirst();
    if (!filter) throw conflict('filterId', `filter ${filterId} does not exist`);
    valueId = await filterValueId(w, filterId, input.value);
  }
  if (valueId === undefined) throw new AppError('invalid_body', 'Give valueId or value.', { errors: [{ name: 'valueId', reason: 'is required (or value)' }] });
  return { ...input, filterId, valueId };
}

export const productFilters = defineResource({
  collection: 'product-filters',
  event: 'product-filter',
  title: 'Product filter value',
  description: 'Faceted-navigation values of products (for example Colour = red).',
  table: 'product_filters',
  scopeDescription: 'Read product filter values',
  from: (db) =>
    db.selectFrom('product_filters as t').innerJoin('filters as f', 'f.id', 't.filter_id').innerJoin('filter_values as v', 'v.id', 't.value_id'),
  fields: [
    idField,
    { name: 'productId', column: 'product_id', type: 'integer', write: { schema: { type: 'integer', ...ID_BOUNDS }, required: true, patch: false } },
    { name: 'filterId', column: 'filter_id', type: 'integer', write: { schema: { type: 'integer', ...ID_BOUNDS, description: 'An existing filter; or give filterName.' }, patch: false } },
    { name: 'filterName', column: 'f.name', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 200, description: 'Found by name, or created when new.' }, patch: false } },
    { name: 'valueId', column: 'value_id', type: 'integer', write: { schema: { type: 'integer', ...ID_BOUNDS, description: 'An existing value of the filter; or give value.' } } },
    { name: 'value', column: 'v.value', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 500, description: 'Found among the filter\'s values, or created when new.' } } },
    createdAtField,
    updatedAtField,
  ],
  // A value belongs to its product: it goes with it, and a change of it is a change of the product.
  relations: [{ field: 'productId', table: 'products', label: 'product', onDelete: 'cascade' }],
  uniques: [{
    fields: ['productId', 'valueId'],
    clash: (v, id) => ({ message: `valueId is already set on product ${String(v.productId)} (id ${id}).`, name: 'valueId', reason: `is already set on product ${String(v.productId)} (id ${id})` }),
  }],
  // A record without id updates the product's same value (by value id, or by filter and value text).
  naturalKey: async (w, record) => {
    const productId = positive(record.productId);
    let valueId = positive(record.valueId);
    if (valueId === undefined && typeof record.value === 'string' && record.value !== '') {
      let filterId = positive(record.filterId);
      if (filterId === undefined && typeof record.filterName === 'string' && record.filterName !== '') {
        const filter = await w.trx.selectFrom('filters').select('id').where('name', '=', record.filterName).executeTakeFirst();
        filterId = filter ? Number(filter.id) : undefined;
      }
      if (filterId === undefined) return undefined;
      const value = await w.trx.selectFrom('filter_values').select('id').where('filter_id', '=', filterId).where('value', '=', record.value).executeTakeFirst();
      valueId = value ? Number(value.id) : undefined;
    }
    if (productId === undefined || valueId === undefined) return undefined;
    const row = await w.trx.selectFrom('product_filters').select('id').where('product_id', '=', productId).where('value_id', '=', valueId).executeTakeFirst();
    return row ? Number(row.id) : undefined;
  },
  mirror: true,
  lookups: [
    { table: 'filters', of: (i, now) => ({ id: Number(i.filterId), name: String(i.filterName), created_at: now }), compare: ['name'], unique: { column: 'name' } },
    {
      table: 'filter_values',
      of: (i, now) => ({ id: Number(i.valueId), filter_id: Number(i.filterId), value: String(i.value), created_at: now }),
      compare: ['filter_id', 'value'],
      unique: { column: 'value', scope: 'filter_id' },
    },
  ],
  prepare: resolve,
  filters: [idListFilter('productId', 't.product_id', 'Product ids.'), idListFilter('filterId', 't.filter_id', 'Filter ids.')],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
});
