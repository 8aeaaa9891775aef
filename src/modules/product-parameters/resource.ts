import { idListFilter } from '../../listing/filters.ts';
import type { ResourceDef } from '../../listing/resource.ts';
import { createdAtField, idField, updatedAtField } from '../common-fields.ts';

export const productParameters: ResourceDef = {
  collection: 'product-parameters',
  event: 'product-parameter',
  title: 'Product parameter value',
  description: 'Technical parameter values of products (for example Weight = 1.2 kg).',
  scope: 'product-parameters:read',
  from: (db) => db.selectFrom('product_parameters as t').innerJoin('parameters as p', 'p.id', 't.parameter_id'),
  fields: [
    idField,
    { name: 'productId', column: 't.product_id', type: 'integer' },
    { name: 'parameterId', column: 't.parameter_id', type: 'integer' },
    { name: 'parameterName', column: 'p.name', type: 'string' },
    { name: 'value', column: 't.value', type: 'string' },
    { name: 'unit', column: 'p.unit', type: 'string', nullable: true },
    createdAtField,
    updatedAtField,
  ],
  filters: [idListFilter('productId', 't.product_id', 'Product ids.'), idListFilter('parameterId', 't.parameter_id', 'Parameter ids.')],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
};
