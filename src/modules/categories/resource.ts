import { AppError, invalidParameter } from '../../errors/app-error.ts';
import { parseIdList } from '../../listing/parse.ts';
import { defineResource } from '../../resources/define.ts';
import { slugify, slugOrNameKey } from '../../resources/slug.ts';
import { createdAtField, ID_BOUNDS, idField, INT32_BOUNDS, slugInput, updatedAtField } from '../common-fields.ts';
import { categorySubtree } from './subtree.ts';

export const categories = defineResource({
  collection: 'categories',
  event: 'category',
  title: 'Category',
  description: 'The category tree: each category names its parent (null at the root).',
  table: 'categories',
  fields: [
    idField,
    { name: 'parentId', column: 'parent_id', type: 'integer', nullable: true, description: 'The parent category; null at the root.', write: { schema: { type: ['integer', 'null'], ...ID_BOUNDS } } },
    { name: 'name', column: 'name', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 200 }, required: true } },
    { name: 'slug', column: 'slug', type: 'string', write: { schema: slugInput(200) } },
    { name: 'position', column: 'position', type: 'integer', description: 'Order among siblings.', write: { schema: { type: 'integer', ...INT32_BOUNDS }, default: 0 } },
    createdAtField,
    updatedAtField,
  ],
  derive: (input, existing) => (!existing && input.slug === undefined ? { slug: slugify(String(input.name)) } : {}),
  relations: [{ field: 'parentId', table: 'categories', label: 'category', referencedAs: 'subcategories' }],
  uniques: [{ fields: ['slug'] }],
  naturalKey: slugOrNameKey('categories'),
  mirror: true,
  prepare: async (w, input, existing) => {
    // A generated slug starts with the parent's, as the seeder's do, so that "Accessories" can exist under
    // "Drills" and under "Saws"; only a true duplicate under the same parent clashes.
    if (!existing && input.slug === undefined && typeof input.parentId === 'number' && typeof input.name === 'string') {
      const parent = await w.trx.selectFrom('categories').select('slug').where('id', '=', input.parentId).executeTakeFirst();
      if (parent) input = { ...input, slug: slugify(`${parent.slug}-${input.name}`) };
    }
    // A category cannot move under itself or its own descendants: the tree must stay a tree.
    if (existing && typeof input.parentId === 'number') {
      const inside = await w.trx.selectFrom('categories').select('id').where('id', 'in', categorySubtree([Number(existing.id)])).where('id', '=', input.parentId).executeTakeFirst();
      if (inside) throw new AppError('conflict', 'A category cannot become a child of itself or of its descendants.', { errors: [{ name: 'parentId', reason: 'would create a cycle' }] });
    }
    return input;
  },
  filters: [
    {
      name: 'parentId',
      description: 'Parent category ids, comma list; `null` for the root categories.',
      schema: { type: 'string', examples: ['null', '1,2'] },
      apply: (q, raw) => {
        if (raw === 'null') return q.where('t.parent_id', 'is', null);
        if (raw.split(',').includes('null')) throw invalidParameter('parentId', 'must be "null" or a comma list of ids, not both');
        return q.where('t.parent_id', 'in', parseIdList('parentId', raw));
      },
    },
  ],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
});
