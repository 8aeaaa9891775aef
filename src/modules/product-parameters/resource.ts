import type { WriteContext } from '../../events/log.ts';
import { idListFilter } from '../../listing/filters.ts';
import { defineResource } from '../../resources/define.ts';
import type { Input } from '../../resources/types.ts';
import { createdAtField, ID_BOUNDS, idField, updatedAtField } from '../common-fields.ts';

/** The parameter definition named, created on first use. */
export async function parameterIdByName(w: WriteContext, name: string, unit: string | null): Promise<number> {
  const found = await w.trx.selectFrom('parameters').select('id').where('name', '=', name).executeTakeFirst();
  if (found) return Number(found.id);
  const created = await w.trx.insertInto('parameters').values({ name, unit, created_at: w.now }).returning('id').executeTakeFirstOrThrow();
  return Number(created.id);
}

const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);

export const productParameters = defineResource({
  collection: 'product-parameters',
  event: 'product-parameter',
  title: 'Product parameter value',
  description: 'Technical parameter values of products (for example Weight = 1.2 kg).',
  table: 'product_parameters',
  scopeDescription: 'Read product parameter values',
  from: (db) => db.selectFrom('product_parameters as t').innerJoin('parameters as p', 'p.id', 't.parameter_id'),
  fields: [
    idField,
    { name: 'productId', column: 'product_id', type: 'integer', write: { schema: { type: 'integer', ...ID_BOUNDS }, required: true, patch: false } },
    { name: 'parameterId', column: 'parameter_id', type: 'integer', write: { schema: { type: 'integer', ...ID_BOUNDS, description: 'An existing parameter; or give parameterName instead.' }, patch: false } },
    { name: 'parameterName', column: 'p.name', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 200, description: 'Found by name, or created (with unit) when new.' }, patch: false } },
    { name: 'value', column: 'value', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 2000 }, required: true } },
    { name: 'unit', column: 'p.unit', type: 'string', nullable: true, write: { schema: { type: ['string', 'null'], maxLength: 50, description: 'Unit of a parameter created by name.' }, patch: false } },
    createdAtField,
    updatedAtField,
  ],
  input: { createAnyOf: [{ required: ['parameterId'] }, { required: ['parameterName'] }] },
  // A value belongs to its product: it goes with it, and a change of it is a change of the product.
  relations: [
    { field: 'productId', table: 'products', label: 'product', onDelete: 'cascade' },
    { field: 'parameterId', table: 'parameters', label: 'parameter' },
  ],
  uniques: [{
    fields: ['productId', 'parameterId'],
    clash: (v, id) => ({
      message: `Product ${String(v.productId)} already has a value of parameter ${String(v.parameterId)} (id ${id}); change that one.`,
      name: 'parameterId',
      reason: 'already has a value for this product',
    }),
  }],
  // A record without id updates the product's value of the same parameter (by id or by name).
  naturalKey: async (w, record) => {
    const productId = positive(record.productId);
    let parameterId = positive(record.parameterId);
    if (parameterId === undefined && typeof record.parameterName === 'string' && record.parameterName !== '') {
      const found = await w.trx.selectFrom('parameters').select('id').where('name', '=', record.parameterName).executeTakeFirst();
      parameterId = found ? Number(found.id) : undefined;
    }
    if (productId === undefined || parameterId === undefined) return undefined;
    const row = await w.trx.selectFrom('product_parameters').select('id').where('product_id', '=', productId).where('parameter_id', '=', parameterId).executeTakeFirst();
    return row ? Number(row.id) : undefined;
  },
  mirror: true,
  lookups: [{
    table: 'parameters',
    of: (i, now) => ({ id: Number(i.parameterId), name: String(i.parameterName), unit: i.unit === undefined ? null : i.unit, created_at: now }),
    compare: ['name', 'unit'],
    unique: { column: 'name' },
  }],
  prepare: async (w, input: Input) => {
    if (input.parameterId === undefined && typeof input.parameterName === 'string') {
      return { ...input, parameterId: await parameterIdByName(w, input.parameterName, (input.unit as string | null | undefined) ?? null) };
    }
    return input;
  },
  filters: [idListFilter('productId', 't.product_id', 'Product ids.'), idListFilter('parameterId', 't.parameter_id', 'Parameter ids.')],
  sorts: ['id', 'updatedAt'],
  defaultSort: 'id',
});
