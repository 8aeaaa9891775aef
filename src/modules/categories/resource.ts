import { invalidParameter } from '../../errors/app-error.ts';
import { parseIdList } from '../../listing/parse.ts';
import type { ResourceDef } from '../../listing/resource.ts';
import { createdAtField, idField, updatedAtField } from '../common-fields.ts';

export const categories: ResourceDef = {
  collection: 'categories',
  event: 'category',
  title: 'Category',
  description: 'The category tree: each category names its parent (null at the root).',
  scope: 'categories:read',
  from: (db) => db.selectFrom('categories as t'),
  fields: [
    idField,
    { name: 'parentId', column: 't.parent_id', type: 'integer', nullable: true, description: 'The parent category; null at the root.' },
    { name: 'name', column: 't.name', type: 'string' },
    { name: 'slug', column: 't.slug', type: 'string' },
    { name: 'position', column: 't.position', type: 'integer', description: 'Order among siblings.' },
    createdAtField,
    updatedAtField,
  ],
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
};
