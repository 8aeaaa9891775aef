import { substringFilter } from '../../listing/filters.ts';
import type { ResourceDef } from '../../listing/resource.ts';
import { createdAtField, idField, updatedAtField } from '../common-fields.ts';

export const brands: ResourceDef = {
  collection: 'brands',
  event: 'brand',
  title: 'Brand',
  description: 'Brands (manufacturers) of products.',
  scope: 'brands:read',
  from: (db) => db.selectFrom('brands as t'),
  fields: [
    idField,
    { name: 'name', column: 't.name', type: 'string' },
    { name: 'slug', column: 't.slug', type: 'string' },
    { name: 'description', column: 't.description', type: 'string', nullable: true },
    { name: 'website', column: 't.website', type: 'string', nullable: true },
    createdAtField,
    updatedAtField,
  ],
  filters: [substringFilter('search', ['t.name_lc'], 'Case-insensitive substring of the name.')],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
};
