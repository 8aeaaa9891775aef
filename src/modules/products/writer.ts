import { MONEY_INPUT, normalizeMoney } from '../money.ts';
import { ID_BOUNDS, INT32_BOUNDS, PRODUCT_STATUSES } from '../common-fields.ts';
import type { JsonSchema } from '../../listing/resource.ts';
import type { NewEvent, WriteContext } from '../../events/log.ts';
import { getOne } from '../../listing/engine.ts';
import { pick, type Input, type WritableResource } from '../writer.ts';
import { products } from './resource.ts';

const nullableString = (max: number) => ({ type: ['string', 'null'], maxLength: max });
const properties: Record<string, JsonSchema> = {
  articleNumber: { type: 'string', minLength: 1, maxLength: 64 },
  name: { type: 'string', minLength: 1, maxLength: 500 },
  description: nullableString(100_000),
  status: { type: 'string', enum: [...PRODUCT_STATUSES], default: undefined },
  brandId: { type: ['integer', 'null'], ...ID_BOUNDS },
  categoryId: { type: ['integer', 'null'], ...ID_BOUNDS },
  ean: { type: ['string', 'null'], pattern: '^\\d{8,14}$' },
  price: MONEY_INPUT,
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  vatRate: { type: 'number', minimum: 0, maximum: 100 },
  stock: { type: 'integer', ...INT32_BOUNDS },
  weight: { type: ['number', 'null'], minimum: 0 },
  url: { type: ['string', 'null'], maxLength: 2000 },
};

const COLUMNS = {
  articleNumber: 'article_number', name: 'name', description: 'description', status: 'status', brandId: 'brand_id', categoryId: 'category_id',
  ean: 'ean', price: 'price', currency: 'currency', vatRate: 'vat_rate', stock: 'stock', weight: 'weight', url: 'url',
};

export function productRow(input: Input, existing: Input | undefined): Record<string, unknown> {
  const row = pick(input, COLUMNS, { price: (v) => normalizeMoney(String(v)) });
  if (!existing) {
    row.status ??= 'active';
    row.stock ??= 0;
  }
  if (typeof input.articleNumber === 'string') row.article_number_lc = input.articleNumber.toLowerCase();
  if (typeof input.name === 'string') row.name_lc = input.name.toLowerCase();
  return row;
}

/** The product.updated event a change of its parameter or filter values adds, with the product's new updatedAt. */
export async function touchProduct(w: WriteContext, productId: number): Promise<NewEvent[]> {
  const updated = await w.trx.updateTable('products').set({ updated_at: w.now }).where('id', '=', productId).executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return [];
  const product = await getOne(w.trx, products, productId);
  return product ? [{ type: 'product.updated', resource: 'product', resourceId: productId, data: product }] : [];
}

export const productWriter: WritableResource = {
  def: products,
  table: 'products',
  createSchema: { type: 'object', additionalProperties: false, required: ['articleNumber', 'name', 'price', 'currency', 'vatRate'], properties },
  patchSchema: { type: 'object', additionalProperties: false, minProperties: 1, properties },
  references: [
    { field: 'brandId', table: 'brands', label: 'brand' },
    { field: 'categoryId', table: 'categories', label: 'category' },
  ],
  uniques: [{ field: 'articleNumber', column: 'article_number' }],
  toRow: productRow,
  // Parameter and filter values go with their product; their deletions are recorded as events too.
  cascades: async (w, id) => {
    const params = await w.trx.selectFrom('product_parameters').select('id').where('product_id', '=', id).execute();
    const filters = await w.trx.selectFrom('product_filters').select('id').where('product_id', '=', id).execute();
    return [
      ...params.map((p) => ({ type: 'product-parameter.deleted', resource: 'product-parameter', resourceId: Number(p.id), data: { id: Number(p.id) } })),
      ...filters.map((f) => ({ type: 'product-filter.deleted', resource: 'product-filter', resourceId: Number(f.id), data: { id: Number(f.id) } })),
    ];
  },
};
