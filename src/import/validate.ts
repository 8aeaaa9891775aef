import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { addFormats } from '../ajv-formats.ts';
import { validationReason } from '../errors/validation-reasons.ts';
import type { Input, Resource } from '../resources/types.ts';

/** One problem with one field of a record; `field` is a dotted path (`items.2.quantity`) or absent for the whole record. */
export interface FieldIssue {
  field?: string;
  reason: string;
}

// The options of the admin API's body validator (src/app.ts): a record is accepted exactly when the admin API would
// accept it as a JSON body. Bodies are typed JSON, so nothing is coerced; CSV cells are typed by csv.ts beforehand.
// (`verbose` only adds the failing schema to errors, for their wording.)
const ajv = new Ajv({ removeAdditional: false, allErrors: true, coerceTypes: false, useDefaults: true, strict: false, verbose: true });
addFormats(ajv);

export interface RecordValidators {
  create: ValidateFunction;
  patch: ValidateFunction;
  /** Every field's own rules, nothing required: checks a record before it is known whether it creates or updates. */
  shape: ValidateFunction;
}

const compiled = new WeakMap<Resource, RecordValidators>();

export function validatorsFor(w: Resource): RecordValidators {
  let v = compiled.get(w);
  if (!v) {
    const shape = { type: 'object', additionalProperties: false, properties: w.createSchema.properties };
    compiled.set(w, (v = { create: ajv.compile(w.createSchema), patch: ajv.compile(w.patchSchema), shape: ajv.compile(shape) }));
  }
  return v;
}

function describe(e: ErrorObject): FieldIssue {
  const { name, reason } = validationReason(e, 'is not a field of this resource');
  return { field: name || undefined, reason };
}

/** Validates one record (filling schema defaults, as Fastify does); returns its problems, none when valid. */
export function validateRecord(validate: ValidateFunction, record: Input): FieldIssue[] {
  if (validate(record)) return [];
  const errors = validate.errors ?? [];
  // The branches of an anyOf report their own failures; the anyOf itself says it better.
  return errors.filter((e) => !e.schemaPath.includes('/anyOf/')).map(describe);
}
