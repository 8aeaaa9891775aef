import { AppError } from '../../errors/app-error.ts';
import type { WriteContext } from '../../events/log.ts';
import type { JsonSchema } from '../../listing/resource.ts';
import { ID_BOUNDS } from '../common-fields.ts';
import { touchProduct } from '../products/writer.ts';
import type { Input, WritableResource } from '../writer.ts';
import { productFilters } from './resource.ts';

const properties: Record<string, JsonSchema> = {
  productId: { type: 'integer', ...ID_BOUNDS },
  filterId: { type: 'integer', ...ID_BOUNDS, description: 'An existing filter; or give filterName.' },
  filterName: { type: 'string', minLength: 1, maxLength: 200, description: 'Found by name, or created when new.' },
  valueId: { type: 'integer', ...ID_BOUNDS, description: 'An existing value of the filter; or give value.' },
  value: { type: 'string', minLength: 1, maxLength: 500, description: 'Found among the filter\'s values, or created when new.' },
};

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

/** Resolves names to ids and checks that the value belongs to the filter. */
async function resolve(w: WriteContext, input: Input, existing: Input | undefined): Promise<Input> {
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
  const productId = (input.productId as number | undefined) ?? (existing?.productId as number);
  const clash = await w.trx.selectFrom('product_filters').select('id').where('product_id', '=', productId).where('value_id', '=', valueId).executeTakeFirst();
  if (clash && Number(clash.id) !== Number(existing?.id)) throw conflict('valueId', `is already set on product ${productId} (id ${clash.id})`);
  return { ...input, filterId, valueId };
}

export const productFilterWriter: WritableResource = {
  def: productFilters,
  table: 'product_filters',
  createSchema: { type: 'object', additionalProperties: false, required: ['productId'], properties },
  patchSchema: {
    type: 'object', additionalProperties: false, minProperties: 1,
    properties: { valueId: properties.valueId, value: properties.value },
  },
  references: [{ field: 'productId', table: 'products', label: 'product' }],
  uniques: [],
  owner: { table: 'products', column: 'product_id' },
  prepare: resolve,
  toRow: (input, existing) =>
    existing ? { filter_id: input.filterId, value_id: input.valueId } : { product_id: input.productId, filter_id: input.filterId, value_id: input.valueId },
  sideEvents: async (w, item) => touchProduct(w, Number(item.productId)),
};
