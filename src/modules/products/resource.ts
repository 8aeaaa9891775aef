import { parseBoolean, parseIdList } from '../../listing/parse.ts';
import { enumListFilter, exactListFilter, idListFilter, substringFilter } from '../../listing/filters.ts';
import { defineResource } from '../../resources/define.ts';
import type { Filter } from '../../resources/types.ts';
import { createdAtField, ID_BOUNDS, idField, INT32_BOUNDS, PRODUCT_STATUSES, updatedAtField } from '../common-fields.ts';
import { brands } from '../brands/resource.ts';
import { categories } from '../categories/resource.ts';
import { categorySubtree } from '../categories/subtree.ts';
import { productFilters } from '../product-filters/resource.ts';
import { productParameters } from '../product-parameters/resource.ts';

const categoryFilter: Filter = {
  name: 'categoryId',
  description: 'Category ids, comma list. With `includeSubcategories=true` products of their subcategories match too.',
  schema: { type: 'string', examples: ['3,4'] },
  apply: (q, raw, { filters }) => {
    const ids = parseIdList('categoryId', raw);
    const deep = filters.includeSubcategories !== undefined && parseBoolean('includeSubcategories', filters.includeSubcategories);
    return q.where('t.category_id', 'in', deep ? categorySubtree(ids) : ids);
  },
};

// includeSubcategories changes what categoryId means, so it widens that filter rather than filtering alone.
const includeSubcategories: Filter = {
  name: 'includeSubcategories',
  description: 'With `categoryId`, also match products in every subcategory of those categories.',
  schema: { type: 'string', enum: ['true', 'false'] },
  apply: (q, raw) => {
    parseBoolean('includeSubcategories', raw);
    return q;
  },
};

const nullableString = (max: number) => ({ type: ['string', 'null'], maxLength: max });

export const products = defineResource({
  collection: 'products',
  event: 'product',
  title: 'Product',
  description: 'Products of the store: article number, name, price, stock, brand and category.',
  table: 'products',
  fields: [
    idField,
    { name: 'articleNumber', column: 'article_number', type: 'string', description: 'Unique article number (SKU).', write: { schema: { type: 'string', minLength: 1, maxLength: 64 }, required: true } },
    { name: 'name', column: 'name', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 500 }, required: true } },
    { name: 'description', column: 'description', type: 'string', nullable: true, write: { schema: nullableString(100_000) } },
    { name: 'status', column: 'status', type: 'enum', values: PRODUCT_STATUSES, write: { schema: { type: 'string', enum: [...PRODUCT_STATUSES], default: undefined }, default: 'active' } },
    { name: 'brandId', column: 'brand_id', type: 'integer', nullable: true, write: { schema: { type: ['integer', 'null'], ...ID_BOUNDS } } },
    { name: 'categoryId', column: 'category_id', type: 'integer', nullable: true, write: { schema: { type: ['integer', 'null'], ...ID_BOUNDS } } },
    { name: 'ean', column: 'ean', type: 'string', nullable: true, description: 'EAN/GTIN barcode.', write: { schema: { type: ['string', 'null'], pattern: '^\\d{8,14}$' } } },
    { name: 'price', column: 'price', type: 'money', description: 'Price as an exact decimal string.', write: { required: true } },
    { name: 'currency', column: 'currency', type: 'string', description: 'ISO 4217 currency code.', write: { schema: { type: 'string', pattern: '^[A-Z]{3}$' }, required: true } },
    { name: 'vatRate', column: 'vat_rate', type: 'number', description: 'VAT rate in percent.', write: { schema: { type: 'number', minimum: 0, maximum: 100 }, required: true } },
    { name: 'stock', column: 'stock', type: 'integer', write: { schema: { type: 'integer', ...INT32_BOUNDS }, default: 0 } },
    { name: 'weight', column: 'weight', type: 'number', nullable: true, description: 'Weight in kilograms.', write: { schema: { type: ['number', 'null'], minimum: 0 } } },
    { name: 'url', column: 'url', type: 'string', nullable: true, description: 'The product page in the shop.', write: { schema: { type: ['string', 'null'], maxLength: 2000 } } },
    createdAtField,
    updatedAtField,
  ],
  // The search columns the `q` and `name` filters read.
  derive: (input) => ({
    ...(typeof input.articleNumber === 'string' ? { article_number_lc: input.articleNumber.toLowerCase() } : {}),
    ...(typeof input.name === 'string' ? { name_lc: input.name.toLowerCase() } : {}),
  }),
  relations: [
    { field: 'brandId', table: 'brands', label: 'brand' },
    { field: 'categoryId', table: 'categories', label: 'category' },
  ],
  includes: {
    brand: { target: brands, kind: 'one', field: 'brandId', description: 'The brand (null when none)' },
    category: { target: categories, kind: 'one', field: 'categoryId', description: 'The category (null when none)' },
    parameters: { target: productParameters, kind: 'many', by: 'productId', description: 'The parameter values, in id order' },
    filters: { target: productFilters, kind: 'many', by: 'productId', description: 'The filter values, in id order' },
  },
  uniques: [{ fields: ['articleNumber'] }],
  naturalKey: ['articleNumber'],
  mirror: true,
  filters: [
    substringFilter('q', ['t.name_lc', 't.article_number_lc'], 'Case-insensitive substring of the name or the article number.'),
    substringFilter('name', ['t.name_lc'], 'Case-insensitive substring of the name.'),
    exactListFilter('articleNumber', 't.article_number', 'Article numbers.'),
    enumListFilter('status', 't.status', PRODUCT_STATUSES, 'Statuses.'),
    idListFilter('brandId', 't.brand_id', 'Brand ids.'),
    categoryFilter,
    includeSubcategories,
  ],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
});
