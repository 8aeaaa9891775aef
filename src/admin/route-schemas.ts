import { ID_BOUNDS } from '../modules/common-fields.ts';

/** What every /admin/api operation declares alike: its OpenAPI tag, its security scheme, and an `{id}` path. */
export const tags = ['Admin'];
export const security = [{ adminToken: [] }];
export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'integer', ...ID_BOUNDS } } };

/** The path parameters of an `{id}` operation, as `idParams` has validated (and coerced) them. */
export interface IdParams {
  id: number;
}
