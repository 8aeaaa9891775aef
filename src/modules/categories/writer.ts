import { AppError } from '../../errors/app-error.ts';
import type { JsonSchema } from '../../listing/resource.ts';
import { ID_BOUNDS, INT32_BOUNDS } from '../common-fields.ts';
import { pick, slugify, type WritableResource } from '../writer.ts';
import { categories } from './resource.ts';
import { categorySubtree } from './subtree.ts';

const properties: Record<string, JsonSchema> = {
  parentId: { type: ['integer', 'null'], ...ID_BOUNDS },
  name: { type: 'string', minLength: 1, maxLength: 200 },
  slug: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 200 },
  position: { type: 'integer', ...INT32_BOUNDS },
};

export const categoryWriter: WritableResource = {
  def: categories,
  table: 'categories',
  createSchema: { type: 'object', additionalProperties: false, required: ['name'], properties },
  patchSchema: { type: 'object', additionalProperties: false, minProperties: 1, properties },
  references: [{ field: 'parentId', table: 'categories', label: 'category' }],
  uniques: [{ field: 'slug', column: 'slug' }],
  dependents: [
    { table: 'categories', column: 'parent_id', label: 'subcategories' },
    { table: 'products', column: 'category_id', label: 'products' },
  ],
  // A category cannot move under itself or its own descendants: the tree must stay a tree.
  prepare: async (w, input, existing) => {
    // A generated slug starts with the parent's, as the seeder's do, so that "Accessories" can exist under
    // "Drills" and under "Saws"; only a true duplicate under the same parent clashes.
    if (!existing && input.slug === undefined && typeof input.parentId === 'number' && typeof input.name === 'string') {
      const parent = await w.trx.selectFrom('categories').select('slug').where('id', '=', input.parentId).executeTakeFirst();
      if (parent) input = { ...input, slug: slugify(`${parent.slug}-${input.name}`) };
    }
    if (existing && typeof input.parentId === 'number') {
      const inside = await w.trx.selectFrom('categories').select('id').where('id', 'in', categorySubtree([Number(existing.id)])).where('id', '=', input.parentId).executeTakeFirst();
      if (inside) throw new AppError('conflict', 'A category cannot become a child of itself or of its descendants.', { errors: [{ name: 'parentId', reason: 'would create a cycle' }] });
    }
    return input;
  },
  toRow: (input, existing) => {
    const row = pick(input, { parentId: 'parent_id', name: 'name', slug: 'slug', position: 'position' });
    if (!existing) {
      row.slug ??= slugify(String(input.name));
      row.position ??= 0;
    }
    return row;
  },
};
