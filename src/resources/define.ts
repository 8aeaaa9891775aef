import type { Executor } from '../db/database.ts';
import { moneyInputSchema, normalizeMoney } from '../money.ts';
import { decodeJsonText } from './json-text.ts';
import { loose } from './loose.ts';
import { attachNested, checkNestedTable } from './nested.ts';
import type { Field, FieldDeclaration, Input, JsonSchema, LooseQuery, Resource, ResourceDeclaration, Row, Unique } from './types.ts';

const qualified = (column: string): string => (column.includes('.') ? column : `t.${column}`);

/** The stored form of an input value: money normalised, objects and arrays as JSON text, anything else as given. */
function encoderOf(f: FieldDeclaration): ((value: unknown) => unknown) | undefined {
  if (f.write?.encode) return f.write.encode;
  if (f.type === 'money') return (v) => normalizeMoney(String(v));
  if (f.type === 'object' || f.type === 'array') return (v) => JSON.stringify(v);
  return undefined;
}

function inputSchemaOf(r: ResourceDeclaration, f: FieldDeclaration): JsonSchema {
  const schema = f.write?.schema ?? (f.type === 'money' ? moneyInputSchema() : undefined);
  if (!schema) throw new Error(`${r.collection}.${f.name}: a written field needs write.schema`);
  return schema;
}

function schemasOf(r: ResourceDeclaration): { createSchema: JsonSchema; patchSchema: JsonSchema } {
  const written = r.fields.filter((f) => f.write);
  const properties: Record<string, JsonSchema> = Object.fromEntries(written.map((f) => [f.name, inputSchemaOf(r, f)]));
  const extra = Object.entries(r.input?.extra ?? {});
  for (const [name, input] of extra) properties[name] = input.schema;
  const required = [...written.filter((f) => f.write!.required).map((f) => f.name), ...extra.filter(([, input]) => input.required).map(([name]) => name)];
  const patchable = Object.fromEntries(Object.entries(properties).filter(([name]) => written.find((f) => f.name === name)?.write!.patch !== false));
  const createSchema: JsonSchema = { type: 'object', additionalProperties: false, required, properties };
  if (r.input?.createAnyOf) createSchema.anyOf = r.input.createAnyOf;
  return { createSchema, patchSchema: { type: 'object', additionalProperties: false, minProperties: 1, properties: patchable } };
}

function uniquesOf(r: ResourceDeclaration, fields: Field[]): Unique[] {
  return (r.uniques ?? []).map((u) => ({
    ...u,
    columns: u.fields.map((name) => {
      const stored = fields.find((f) => f.name === name)?.stored;
      if (!stored) throw new Error(`${r.collection}: unique field ${name} is not a column of ${r.table}`);
      return stored;
    }),
  }));
}

/**
 * One collection, declared once: the listing engine serves it in every format, the admin API writes it, import
 * matches its records, a follower mirrors it, the changes feed and webhooks carry its events. What needs only
 * this declaration is derived here (schemas, stored rows, event types); what needs the other resources
 * (dependents, cascades, sync order) by the registry.
 */
export function defineResource(r: ResourceDeclaration): Resource {
  const fields: Field[] = r.fields.map((f) => {
    const stored = f.column.includes('.') && !f.column.startsWith('t.') ? undefined : f.column.replace(/^t\./, '');
    // encoderOf stores written objects and arrays as JSON text; what it stores so is read back from it. A read-only
    // field's stored form is not the API's to know, so it says how it is read.
    const jsonText = (f.type === 'object' || f.type === 'array') && stored !== undefined && f.write !== undefined && !f.write.encode && !f.decode;
    return { ...f, column: qualified(f.column), stored, ...(jsonText ? { jsonText, decode: decodeJsonText } : {}) };
  });
  const byName = new Map(fields.map((f) => [f.name, f]));
  for (const [name, inc] of Object.entries(r.includes ?? {})) {
    if (byName.has(name) || r.nested?.[name]) throw new Error(`${r.collection}: include ${name} has the name of a field`);
    if (inc.kind === 'one' && !byName.has(inc.field)) throw new Error(`${r.collection}: include ${name} reads ${inc.field}, which is no field`);
    if (inc.kind === 'many' && !inc.target.fields.some((f) => f.name === inc.by)) throw new Error(`${r.collection}: include ${name}: ${inc.target.collection} has no field ${inc.by}`);
  }
  for (const [name, t] of Object.entries(r.nestedTables ?? {})) checkNestedTable(r.collection, name, r.nested?.[name], t);
  if (r.nestedTables && r.attach) throw new Error(`${r.collection}: attach is derived from nestedTables; declare one of them`);
  for (const rel of r.relations ?? []) if (!byName.get(rel.field)?.stored) throw new Error(`${r.collection}: relation field ${rel.field} is not a column of ${r.table}`);
  const written = fields.filter((f) => f.write && f.stored).map((f) => ({ field: f, encode: encoderOf(f) }));
  const shown = fields.filter((f) => f.stored && f.stored !== 'id').map((f) => ({ field: f, encode: encoderOf(f) }));
  const table = r.table;

  const toRow = (input: Input, existing: Row | undefined): Row => {
    const row: Row = {};
    for (const { field, encode } of written) {
      const value = input[field.name];
      if (value !== undefined) row[field.stored!] = encode && value !== null ? encode(value) : value;
      else if (!existing && field.write!.default !== undefined) row[field.stored!] = field.write!.default;
    }
    return { ...row, ...r.derive?.(input, existing) };
  };

  const mirrorRow = (item: Row): Row => {
    const row: Row = {};
    for (const { field, encode } of shown) {
      const value = item[field.name] ?? null;
      row[field.stored!] = encode && value !== null ? encode(value) : value;
    }
    return { ...row, ...r.derive?.(item, undefined) };
  };

  return {
    ...r,
    scope: r.scope ?? `${r.collection}:read`,
    scopeDescription: r.scopeDescription ?? `Read ${r.collection}`,
    attach: r.attach ?? (r.nestedTables ? attachNested(r.nestedTables) : undefined),
    from: r.from ?? ((db: Executor): LooseQuery => loose(db).selectFrom(`${table} as t`)),
    fields,
    filters: r.filters ?? [],
    relations: r.relations ?? [],
    includes: r.includes ?? {},
    uniques: uniquesOf(r, fields),
    ...schemasOf(r),
    eventTypes: ['created', 'updated', 'deleted', ...Object.keys(r.extraEventTypes ?? {})].map((action) => `${r.event}.${action}`),
    toRow,
    mirrorRow,
  };
}
