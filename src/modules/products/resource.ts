import { parseBoolean, parseIdList } from '../../listing/parse.ts';
import { enumListFilter, exactListFilter, idListFilter, substringFilter } from '../../listing/filters.ts';
import type { Filter, ResourceDef } from '../../listing/resource.ts';
import { createdAtField, idField, PRODUCT_STATUSES, updatedAtField } from '../common-fields.ts';
import { categorySubtree } from '../categories/subtree.ts';

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

export const products: ResourceDef = {
  collection: 'products',
  event: 'product',
  title: 'Product',
  description: 'Products of the store: article number, name, price, stock, brand and category.',
  scope: 'products:read',
  from: (db) => db.selectFrom('products as t'),
  fields: [
    idField,
    { name: 'articleNumber', column: 't.article_number', type: 'string', description: 'Unique article number (SKU).' },
    { name: 'name', column: 't.name', type: 'string' },
    { name: 'description', column: 't.description', type: 'string', nullable: true },
    { name: 'status', column: 't.status', type: 'enum', values: PRODUCT_STATUSES },
    { name: 'brandId', column: 't.brand_id', type: 'integer', nullable: true },
    { name: 'categoryId', column: 't.category_id', type: 'integer', nullable: true },
    { name: 'ean', column: 't.ean', type: 'string', nullable: true, description: 'EAN/GTIN barcode.' },
    { name: 'price', column: 't.price', type: 'money', description: 'Price as an exact decimal string.' },
    { name: 'currency', column: 't.currency', type: 'string', description: 'ISO 4217 currency code.' },
    { name: 'vatRate', column: 't.vat_rate', type: 'number', description: 'VAT rate in percent.' },
    { name: 'stock', column: 't.stock', type: 'integer' },
    { name: 'weight', column: 't.weight', type: 'number', nullable: true, description: 'Weight in kilograms.' },
    { name: 'url', column: 't.url', type: 'string', nullable: true, description: 'The product page in the shop.' },
    createdAtField,
    updatedAtField,
  ],
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
};
