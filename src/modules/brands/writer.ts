import type { JsonSchema } from '../../listing/resource.ts';
import { pick, slugify, type WritableResource } from '../writer.ts';
import { brands } from './resource.ts';

const properties: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  slug: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100 },
  description: { type: ['string', 'null'], maxLength: 100_000 },
  website: { type: ['string', 'null'], maxLength: 2000 },
};

export const brandWriter: WritableResource = {
  def: brands,
  table: 'brands',
  createSchema: { type: 'object', additionalProperties: false, required: ['name'], properties },
  patchSchema: { type: 'object', additionalProperties: false, minProperties: 1, properties },
  references: [],
  uniques: [{ field: 'slug', column: 'slug' }],
  dependents: [{ table: 'products', column: 'brand_id', label: 'products' }],
  toRow: (input, existing) => {
    const row = pick(input, { name: 'name', slug: 'slug', description: 'description', website: 'website' });
    if (typeof input.name === 'string') row.name_lc = input.name.toLowerCase();
    if (!existing && row.slug === undefined) row.slug = slugify(String(input.name));
    return row;
  },
};
