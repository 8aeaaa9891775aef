import { AppError } from '../../errors/app-error.ts';
import type { WriteContext } from '../../events/log.ts';
import type { JsonSchema } from '../../listing/resource.ts';
import { ID_BOUNDS } from '../common-fields.ts';
import { touchProduct } from '../products/writer.ts';
import type { Input, WritableResource } from '../writer.ts';
import { productParameters } from './resource.ts';

const properties: Record<string, JsonSchema> = {
  productId: { type: 'integer', ...ID_BOUNDS },
  parameterId: { type: 'integer', ...ID_BOUNDS, description: 'An existing parameter; or give parameterName instead.' },
  parameterName: { type: 'string', minLength: 1, maxLength: 200, description: 'Found by name, or created (with unit) when new.' },
  unit: { type: ['string', 'null'], maxLength: 50, description: 'Unit of a parameter created by name.' },
  value: { type: 'string', minLength: 1, maxLength: 2000 },
};

/** The parameter definition named, created on first use. */
export async function parameterIdByName(w: WriteContext, name: string, unit: string | null): Promise<number> {
  const found = await w.trx.selectFrom('parameters').select('id').where('name', '=', name).executeTakeFirst();
  if (found) return Number(found.id);
  const created = await w.trx.insertInto('parameters').values({ name, unit, created_at: w.now }).returning('id').executeTakeFirstOrThrow();
  return Number(created.id);
}

async function prepare(w: WriteContext, input: Input): Promise<Input> {
  if (input.parameterId === undefined && typeof input.parameterName === 'string') {
    return { ...input, parameterId: await parameterIdByName(w, input.parameterName, (input.unit as string | null | undefined) ?? null) };
  }
  return input;
}

export const productParameterWriter: WritableResource = {
  def: productParameters,
  table: 'product_parameters',
  createSchema: {
    type: 'object', additionalProperties: false, required: ['productId', 'value'], properties,
    anyOf: [{ required: ['parameterId'] }, { required: ['parameterName'] }],
  },
  patchSchema: { type: 'object', additionalProperties: false, minProperties: 1, properties: { value: properties.value } },
  references: [
    { field: 'productId', table: 'products', label: 'product' },
    { field: 'parameterId', table: 'parameters', label: 'parameter' },
  ],
  uniques: [],
  owner: { table: 'products', column: 'product_id' },
  prepare: async (w, input, existing) => {
    const prepared = await prepare(w, input);
    if (!existing) {
      const clash = await w.trx.selectFrom('product_parameters').select('id')
        .where('product_id', '=', Number(prepared.productId)).where('parameter_id', '=', Number(prepared.parameterId)).executeTakeFirst();
      if (clash) throw new AppError('conflict', `Product ${String(prepared.productId)} already has a value of parameter ${String(prepared.parameterId)} (id ${clash.id}); change that one.`, { errors: [{ name: 'parameterId', reason: 'already has a value for this product' }] });
    }
    return prepared;
  },
  toRow: (input, existing) => {
    if (existing) return { value: input.value };
    return { product_id: input.productId, parameter_id: input.parameterId, value: input.value };
  },
  sideEvents: async (w, item) => touchProduct(w, Number(item.productId)),
};
