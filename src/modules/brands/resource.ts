import { substringFilter } from '../../listing/filters.ts';
import { defineResource } from '../../resources/define.ts';
import { slugify, slugOrNameKey } from '../../resources/slug.ts';
import { createdAtField, idField, slugInput, updatedAtField } from '../common-fields.ts';

export const brands = defineResource({
  collection: 'brands',
  event: 'brand',
  title: 'Brand',
  description: 'Brands (manufacturers) of products.',
  table: 'brands',
  fields: [
    idField,
    { name: 'name', column: 'name', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 200 }, required: true } },
    { name: 'slug', column: 'slug', type: 'string', write: { schema: slugInput(100) } },
    { name: 'description', column: 'description', type: 'string', nullable: true, write: { schema: { type: ['string', 'null'], maxLength: 100_000 } } },
    { name: 'website', column: 'website', type: 'string', nullable: true, write: { schema: { type: ['string', 'null'], maxLength: 2000 } } },
    createdAtField,
    updatedAtField,
  ],
  // The search column of the `search` filter, and a slug made from the name when none is given.
  derive: (input, existing) => ({
    ...(typeof input.name === 'string' ? { name_lc: input.name.toLowerCase() } : {}),
    ...(!existing && input.slug === undefined ? { slug: slugify(String(input.name)) } : {}),
  }),
  uniques: [{ fields: ['slug'] }],
  naturalKey: slugOrNameKey('brands'),
  mirror: true,
  filters: [substringFilter('search', ['t.name_lc'], 'Case-insensitive substring of the name.')],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
});
