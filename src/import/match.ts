import type { WriteContext } from '../events/log.ts';
import { getOne } from '../listing/engine.ts';
import type { Row } from '../listing/resource.ts';
import { slugify, type Input, type WritableResource } from '../modules/writer.ts';

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);

async function idBy(w: WriteContext, table: 'products' | 'brands' | 'categories' | 'orders' | 'parameters' | 'filters', column: string, value: string | undefined): Promise<number | undefined> {
  if (value === undefined) return undefined;
  const row = await w.trx.selectFrom(table).select('id').where(column as 'id', '=', value as unknown as number).executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

/**
 * The id of the existing item a record without `id` stands for, by its natural key: a product's articleNumber,
 * a brand's or category's slug (or the slug its name would get), an order's number, a product's value of one
 * parameter or filter.
 */
async function idByNaturalKey(w: WriteContext, r: WritableResource, record: Input): Promise<number | undefined> {
  switch (r.def.collection) {
    case 'products':
      return idBy(w, 'products', 'article_number', text(record.articleNumber));
    case 'brands':
    case 'categories':
      return idBy(w, r.def.collection, 'slug', text(record.slug) ?? (text(record.name) && slugify(String(record.name))));
    case 'orders':
      return idBy(w, 'orders', 'number', text(record.number));
    case 'product-parameters': {
      const productId = positive(record.productId);
      const parameterId = positive(record.parameterId) ?? (await idBy(w, 'parameters', 'name', text(record.parameterName)));
      if (productId === undefined || parameterId === undefined) return undefined;
      const row = await w.trx.selectFrom('product_parameters').select('id').where('product_id', '=', productId).where('parameter_id', '=', parameterId).executeTakeFirst();
      return row ? Number(row.id) : undefined;
    }
    case 'product-filters': {
      const productId = positive(record.productId);
      let valueId = positive(record.valueId);
      if (valueId === undefined && text(record.value) !== undefined) {
        const filterId = positive(record.filterId) ?? (await idBy(w, 'filters', 'name', text(record.filterName)));
        if (filterId === undefined) return undefined;
        const value = await w.trx.selectFrom('filter_values').select('id').where('filter_id', '=', filterId).where('value', '=', String(record.value)).executeTakeFirst();
        valueId = value ? Number(value.id) : undefined;
      }
      if (productId === undefined || valueId === undefined) return undefined;
      const row = await w.trx.selectFrom('product_filters').select('id').where('product_id', '=', productId).where('value_id', '=', valueId).executeTakeFirst();
      return row ? Number(row.id) : undefined;
    }
    default:
      return undefined;
  }
}

/** The item a record updates: the one with its `id`, or else the one with its natural key; none means create. */
export async function findExisting(w: WriteContext, r: WritableResource, id: number | undefined, record: Input): Promise<Row | undefined> {
  const target = id ?? (await idByNaturalKey(w, r, record));
  return target === undefined ? undefined : getOne(w.trx, r.def, target);
}
