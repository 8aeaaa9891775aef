import { DEFAULT_LIMIT, MAX_LIMIT, sortsOf } from './engine.ts';
import { CSV_DELIMITERS } from './formats/csv.ts';
import { CSV_DECIMALS, CSV_LOCALE_NAMES } from './formats/locale.ts';
import { EXPORT_FORMATS, FORMAT_NAMES } from './formats/negotiate.ts';
import { moneySchema } from '../money.ts';
import { ID_BOUNDS } from '../resources/bounds.ts';
import type { Field, IncludeDeclaration, JsonSchema, Resource as ResourceDef } from '../resources/types.ts';

/** A field's schema in answers (money: a decimal string with two places, which the export formats recognise as money). */
export function fieldSchema(f: Field): JsonSchema {
  let s: JsonSchema;
  switch (f.type) {
    case 'id':
      s = { type: 'integer', ...ID_BOUNDS };
      break;
    case 'integer':
      s = { type: 'integer' };
      break;
    case 'number':
      s = { type: 'number' };
      break;
    case 'money':
      s = moneySchema();
      break;
    case 'datetime':
      s = { type: 'string', format: 'date-time' };
      break;
    case 'enum':
      s = { type: 'string', enum: [...(f.values ?? [])] };
      break;
    case 'object':
    case 'array':
      s = { ...(f.schema ?? {}) };
      break;
    default:
      s = { type: 'string' };
  }
  if (f.description) s.description = f.description;
  if (f.nullable) {
    if (s.enum) s.enum = [...(s.enum as unknown[]), null];
    s.type = [s.type as string, 'null'];
  }
  return s;
}

/** The schema id of a resource's item schema (a component of the OpenAPI document). */
export const itemSchemaId = (def: ResourceDef): string => def.title.replace(/[^A-Za-z]/g, '');

export function itemSchema(def: ResourceDef): JsonSchema {
  const properties: Record<string, JsonSchema> = Object.fromEntries(def.fields.map((f) => [f.name, fieldSchema(f)]));
  Object.assign(properties, def.nested ?? {});
  const required = Object.keys(properties);
  for (const [name, inc] of Object.entries(def.includes)) properties[name] = includedSchema(inc);
  return { $id: itemSchemaId(def), type: 'object', description: def.description, required, properties };
}

/**
 * An included relation as it is embedded (only with `include=`, so never required): the target's item inline
 * (not a `$ref`, so that the schema stands alone wherever it is compiled), with only `id` required because
 * `fields=<include>.<field>` trims it.
 */
function includedSchema(inc: IncludeDeclaration): JsonSchema {
  const target = inc.target;
  const object: JsonSchema = {
    type: 'object',
    description: `${target.title}, as \`GET /api/v2/${target.collection}/{id}\` has it (only the fields asked with \`fields=…\`).`,
    required: ['id'],
    properties: Object.fromEntries(target.fields.map((f) => [f.name, fieldSchema(f)])),
  };
  const scope = ` Only with \`include\`; needs scope \`${target.scope}\`.`;
  if (inc.kind === 'one') return { ...object, type: ['object', 'null'], description: `${inc.description}.${scope}` };
  return { type: 'array', items: object, description: `${inc.description}.${scope}` };
}

export const paginationSchema = {
  $id: 'Pagination',
  type: 'object',
  required: ['limit', 'nextCursor', 'hasMore'],
  properties: {
    limit: { type: 'integer' },
    nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` to get the next page; null on the last page.' },
    hasMore: { type: 'boolean' },
    total: { type: 'integer', description: 'All matches; only with includeTotal=true.' },
  },
} as const;

/** Parameters of every listing, besides the resource's filters. */
export function commonListParameters(def: ResourceDef): Record<string, JsonSchema> {
  return {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: undefined, description: `Page size, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` },
    cursor: { type: 'string', description: 'Opaque position from `pagination.nextCursor`. It remembers the filters and sort, and is signed: sent alone it continues the same listing; an altered cursor is a `400` naming `cursor`, one sent with other filters or sort a `400 cursor_mismatch`.' },
    sort: { type: 'string', enum: sortsOf(def), description: `Sort order (default ${def.defaultSort}); ties are broken by id.` },
    includeTotal: { type: 'string', enum: ['true', 'false'], description: 'Adds `pagination.total` (costs a count query).' },
    updatedSince: { type: 'string', description: 'Only items changed at or after this instant (RFC 3339 date-time or date; UTC when no offset).' },
    ids: { type: 'string', description: 'Only these ids; comma list.' },
  };
}

/** Parameters that choose the output format (API.md §3 "Output formats"). */
export const formatParameters: Record<string, JsonSchema> = {
  format: { type: 'string', enum: [...FORMAT_NAMES], description: 'Output format; wins over `Accept`. Without `limit` or `cursor`, NDJSON, CSV and XLSX carry every matching row.' },
  delimiter: { type: 'string', enum: [...CSV_DELIMITERS], description: 'CSV field delimiter (default `,`); `;` for spreadsheets of locales that expect it. Ignored by JSON and XLSX.' },
  bom: { type: 'string', enum: ['true', 'false'], description: 'CSV only: start with a UTF-8 byte order mark (default false).' },
  locale: {
    type: 'string',
    enum: [...CSV_LOCALE_NAMES],
    description:
      'CSV only: a CSV for the spreadsheet of this locale. Sets the delimiter (`;` where the decimal mark is a comma), the decimal mark of ' +
      'number and money cells, and the BOM; writes date-times as `2026-01-31 12:00:00,000` (UTC; the decimal mark before the milliseconds), which spreadsheets read as dates, and ' +
      'number-like text (article numbers such as `00123`, EANs) as `="00123"`, which they show as text. `delimiter`, `bom` and `decimal` given ' +
      'beside it win. For `cs-CZ`: `;`, `1299,50`, BOM.',
  },
  decimal: {
    type: 'string',
    enum: [...CSV_DECIMALS],
    description: 'CSV only: the decimal mark of number and money cells (default `.`, or the locale\'s); integers have none. `,` needs a delimiter other than `,`.',
  },
  escapeFormulas: {
    type: 'string',
    enum: ['true', 'false'],
    description:
      "CSV only (default true): a text cell starting with `=`, `+`, `-`, `@`, tab or CR (which a spreadsheet would run as a formula) starts with `'`; " +
      'a plain signed number such as `-123` is left as it is. `false` writes every value exactly as JSON has it, for programs that read the CSV.',
  },
};

/** `fields` and `include`, on listings and single items alike (API.md §3 "Shaping"). */
export function shapeParameters(def: ResourceDef): Record<string, JsonSchema> {
  const names = [...def.fields.map((f) => f.name), ...Object.keys(def.nested ?? {})];
  const includes = Object.keys(def.includes);
  const parameters: Record<string, JsonSchema> = {
    fields: {
      type: 'string',
      description:
        `Only these fields, comma list (\`id\` always comes too), in every format; the query selects only them. Fields: ${names.join(', ')}.` +
        (includes.length ? ' `<include>.<field>` (`' + includes[0] + '.id`) trims an included object to those fields.' : '') +
        ' An unknown name is a `400` naming `fields`.',
    },
  };
  if (includes.length) {
    parameters.include = {
      type: 'string',
      description:
        `Related data to embed, comma list: ${includes.map((n) => `\`${n}\` (${def.includes[n].description}; scope \`${def.includes[n].target.scope}\`)`).join(', ')}. ` +
        'Each needs its own read scope (`403` otherwise); CSV and XLSX carry an object as prefixed columns (`brand.name`), an array as one JSON column.',
    };
  }
  return parameters;
}

/** The query of a single item: its shape only. */
export function itemQuerySchema(def: ResourceDef): JsonSchema {
  return { type: 'object', additionalProperties: false, properties: shapeParameters(def) };
}

export function listQuerySchema(def: ResourceDef): JsonSchema {
  const properties = { ...commonListParameters(def), ...shapeParameters(def), ...formatParameters };
  delete (properties.limit as Record<string, unknown>).default;
  for (const f of def.filters) properties[f.name] = { ...f.schema, description: f.description };
  return { type: 'object', additionalProperties: false, properties };
}

/** The export operation's query: the listing's, with `format` required and one of the streamed formats. */
export function exportQuerySchema(def: ResourceDef): JsonSchema {
  const schema = listQuerySchema(def);
  const properties = schema.properties as Record<string, JsonSchema>;
  properties.format = { type: 'string', enum: [...EXPORT_FORMATS], description: 'The file format (required). Without `limit` or `cursor`, every matching row.' };
  return { ...schema, required: ['format'] };
}
