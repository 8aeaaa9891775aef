import { isMoneyInputPattern } from '../money.ts';
import type { FieldError } from './app-error.ts';

/** What an Ajv error carries that the reasons need (Fastify's and Ajv's own error objects both fit). */
export interface ValidationError {
  keyword: string;
  instancePath: string;
  schemaPath?: string;
  message?: string;
  params: Record<string, unknown>;
  /** Present with Ajv's `verbose`: the failing schema (for anyOf, its branches). */
  schema?: unknown;
}

/**
 * One Ajv error as `{ name, reason }`: the dotted path of the parameter or field (empty for the whole body)
 * and a reason a person can act on. The admin API's problems and `store-api import` both speak through it;
 * `unknown` is how the caller names a property the schema does not have.
 */
export function validationReason(e: ValidationError, unknown = 'is not a known parameter or field'): FieldError {
  const path = e.instancePath.split('/').slice(1).join('.');
  const at = (name: string) => (path ? `${path}.${name}` : name);
  switch (e.keyword) {
    case 'required':
      return { name: at(String(e.params.missingProperty)), reason: 'is required' };
    case 'additionalProperties':
      return { name: at(String(e.params.additionalProperty)), reason: unknown };
    case 'minimum':
    case 'maximum':
      return { name: path, reason: `must be ${e.keyword === 'minimum' ? '>=' : '<='} ${String(e.params.limit)}` };
    case 'enum':
      return { name: path, reason: `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}` };
    case 'type':
      return { name: path, reason: `must be ${String(e.params.type).replace(',', ' or ')}` };
    case 'pattern':
      return { name: path, reason: isMoneyInputPattern(e.params.pattern) ? 'must be a decimal string such as "1299.00"' : `must match ${String(e.params.pattern)}` };
    case 'format':
      return { name: path, reason: `must be a valid ${String(e.params.format)}` };
    case 'anyOf': {
      // An anyOf of `required` branches means "give one of these fields" (parameterId or parameterName).
      const branches = Array.isArray(e.schema) ? (e.schema as Array<Record<string, unknown>>).map((s) => (s.required as string[] | undefined)?.join(' and ')).filter(Boolean) : [];
      return { name: path, reason: branches.length ? `needs ${branches.join(' or ')}` : 'matches none of the allowed shapes' };
    }
    default:
      return { name: path, reason: e.message ?? `fails ${e.keyword}` };
  }
}
