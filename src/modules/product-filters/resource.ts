import { idListFilter } from '../../listing/filters.ts';
import type { ResourceDef } from '../../listing/resource.ts';
import { createdAtField, idField, updatedAtField } from '../common-fields.ts';

export const productFilters: ResourceDef = {
  collection: 'product-filters',
  event: 'product-filter',
  title: 'Product filter value',
  description: 'Faceted-navigation values of products (for example Colour = red).',
  scope: 'product-filters:read',
  from: (db) =>
    db.selectFrom('product_filters as t').innerJoin('filters as f', 'f.id', 't.filter_id').innerJoin('filter_values as v', 'v.id', 't.value_id'),
  fields: [
    idField,
    { name: 'productId', column: 't.product_id', type: 'integer' },
    { name: 'filterId', column: 't.filter_id', type: 'integer' },
    { name: 'filterName', column: 'f.name', type: 'string' },
    { name: 'valueId', column: 't.value_id', type: 'integer' },
    { name: 'value', column: 'v.value', type: 'string' },
    createdAtField,
    updatedAtField,
  ],
  filters: [idListFilter('productId', 't.product_id', 'Product ids.'), idListFilter('filterId', 't.filter_id', 'Filter ids.')],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
};
