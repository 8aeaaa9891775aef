import { isMoneySchema, normalizeMoney } from '../money.ts';
import type { Input, JsonSchema, Resource, Row } from '../resources/types.ts';
import type { FieldIssue } from './validate.ts';

const nullable = (schema: JsonSchema | undefined) => Array.isArray(schema?.type) && (schema.type as unknown[]).includes('null');

function sameMoney(given: string, stored: unknown): boolean {
  try {
    return stored !== null && stored !== undefined && normalizeMoney(given) === normalizeMoney(String(stored));
  } catch {
    return false;
  }
}

/**
 * Whether a given value equals the stored one as the API shows it. In objects (addresses, order items) a key
 * left out means null when the field may be null, and "the default" (an item total) when it may not.
 */
export function sameValue(given: unknown, stored: unknown, schema: JsonSchema | undefined): boolean {
  if (given === null) return stored === null || stored === undefined;
  if (typeof given === 'string' && isMoneySchema(schema)) return sameMoney(given, stored);
  if (typeof given === 'number') return stored !== null && Number(stored) === given;
  if (Array.isArray(given)) {
    const items = schema?.items as JsonSchema | undefined;
    return Array.isArray(stored) && stored.length === given.length && given.every((g, i) => sameValue(g, stored[i], items));
  }
  if (typeof given === 'object') {
    if (stored === null || typeof stored !== 'object') return false;
    const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
    const keys = new Set([...Object.keys(given), ...Object.keys(stored)]);
    return [...keys].every((k) => {
      const g = (given as Input)[k];
      if (g === undefined) return !nullable(properties[k]) || (stored as Row)[k] === null || (stored as Row)[k] === undefined;
      return sameValue(g, (stored as Row)[k], properties[k]);
    });
  }
  return given === stored;
}

/**
 * What a record would change in an existing item: the fields that differ, as a patch. A field that a patch
 * cannot carry (a parameter value's productId) must equal what is stored, or the record is refused.
 */
export function changesOf(w: Resource, record: Input, existing: Row): { patch: Input; issues: FieldIssue[] } {
  const properties = w.createSchema.properties as Record<string, JsonSchema>;
  const patchable = new Set(Object.keys(w.patchSchema.properties as Record<string, JsonSchema>));
  const patch: Input = {};
  const issues: FieldIssue[] = [];
  for (const [field, value] of Object.entries(record)) {
    if (value === undefined || sameValue(value, existing[field], properties[field])) continue;
    if (patchable.has(field)) patch[field] = value;
    else issues.push({ field, reason: `cannot be changed by an update (it is ${JSON.stringify(existing[field] ?? null)})` });
  }
  return { patch, issues };
}
