import type { Input, JsonSchema } from '../resources/types.ts';

/** Columns every resource accepts beside its writable fields: the ones a CSV export carries. */
export const READ_ONLY_COLUMNS = ['id', 'createdAt', 'updatedAt'];

export interface CsvRow {
  line: number;
  cells: Record<string, string>;
}

function typesOf(schema: JsonSchema | undefined): string[] {
  const type = schema?.type;
  return typeof type === 'string' ? [type] : Array.isArray(type) ? (type as string[]) : ['string'];
}

const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/**
 * A cell as the JSON value the schema expects: an empty cell is null where null is allowed and absent
 * otherwise (so an update leaves that field alone); numbers become numbers. Anything else stays text for
 * the schema to judge, so the error names the field.
 */
export function cellValue(raw: string, schema: JsonSchema | undefined): unknown {
  const types = typesOf(schema);
  if (raw === '') return types.includes('null') ? null : undefined;
  if ((types.includes('integer') || types.includes('number')) && NUMBER.test(raw.trim())) return Number(raw.trim());
  return raw;
}

/** Builds an object from cells by the schema of its properties, leaving out absent values. */
export function objectFrom(cells: Record<string, string>, columns: Record<string, string>, properties: Record<string, JsonSchema>): Input {
  const out: Input = {};
  for (const [column, field] of Object.entries(columns)) {
    if (cells[column] === undefined) continue;
    const value = cellValue(cells[column], field === 'id' ? { type: 'integer' } : properties[field]);
    if (value !== undefined) out[field] = value;
  }
  return out;
}

