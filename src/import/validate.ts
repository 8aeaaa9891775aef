import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { JsonSchema } from '../listing/resource.ts';
import { MONEY_INPUT } from '../modules/money.ts';
import type { Input, WritableResource } from '../modules/writer.ts';

/** One problem with one field of a record; `field` is a dotted path (`items.2.quantity`) or absent for the whole record. */
export interface FieldIssue {
  field?: string;
  reason: string;
}

// ajv-formats is CommonJS with a `default` beside module.exports; under NodeNext the callable is the default import.
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;

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

const compiled = new Map<WritableResource, RecordValidators>();

export function validatorsFor(w: WritableResource): RecordValidators {
  let v = compiled.get(w);
  if (!v) {
    const shape = { type: 'object', additionalProperties: false, properties: w.createSchema.properties };
    compiled.set(w, (v = { create: ajv.compile(w.createSchema), patch: ajv.compile(w.patchSchema), shape: ajv.compile(shape) }));
  }
  return v;
}

function describe(e: ErrorObject): FieldIssue | undefined {
  const path = e.instancePath.split('/').slice(1).join('.');
  const at = (name: string) => (path ? `${path}.${name}` : name);
  switch (e.keyword) {
    case 'required':
      return { field: at(String(e.params.missingProperty)), reason: 'is required' };
    case 'additionalProperties':
      return { field: at(String(e.params.additionalProperty)), reason: 'is not a field of this resource' };
    case 'pattern':
      return { field: path, reason: e.params.pattern === MONEY_INPUT.pattern ? 'must be a decimal string such as "1299.00"' : `must match ${String(e.params.pattern)}` };
    case 'enum':
      return { field: path, reason: `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}` };
    case 'format':
      return { field: path, reason: `must be a valid ${String(e.params.format)}` };
    case 'anyOf': {
      // An anyOf of `required` branches means "give one of these fields" (parameterId or parameterName).
      const branches = (e.schema as JsonSchema[]).map((s) => (s.required as string[] | undefined)?.join(' and ')).filter(Boolean);
      return { field: path || undefined, reason: branches.length ? `needs ${branches.join(' or ')}` : 'matches none of the allowed shapes' };
    }
    default:
      return { field: path || undefined, reason: e.message ?? `fails ${e.keyword}` };
  }
}

/** Validates one record (filling schema defaults, as Fastify does); returns its problems, none when valid. */
export function validateRecord(validate: ValidateFunction, record: Input): FieldIssue[] {
  if (validate(record)) return [];
  const errors = validate.errors ?? [];
  // The branches of an anyOf report their own failures; the anyOf itself says it better.
  return errors.filter((e) => !e.schemaPath.includes('/anyOf/')).map(describe).filter((i): i is FieldIssue => i !== undefined);
}
