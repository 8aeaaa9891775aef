import { sql } from 'kysely';
import { parseEnumList, parseIdList, parseInstant, parseStringList } from './parse.ts';
import type { Filter, LooseQuery } from './resource.ts';

const commaList = (example: string) => ({ type: 'string', examples: [example] });

/** `name=1,2,3` matches rows whose column is one of the ids. */
export function idListFilter(name: string, column: string, description: string): Filter {
  return {
    name,
    description: `${description} Comma list of ids.`,
    schema: commaList('1,2,3'),
    apply: (q: LooseQuery, raw: string) => q.where(column, 'in', parseIdList(name, raw)),
  };
}

/** `name=a,b` matches rows whose column equals one of the values exactly. */
export function exactListFilter(name: string, column: string, description: string): Filter {
  return {
    name,
    description: `${description} Exact match; comma list.`,
    schema: commaList('A-100,A-200'),
    apply: (q, raw) => q.where(column, 'in', parseStringList(name, raw)),
  };
}

export function enumListFilter(name: string, column: string, values: readonly string[], description: string): Filter {
  return {
    name,
    description: `${description} Comma list of: ${values.join(', ')}.`,
    schema: commaList(values.slice(0, 2).join(',')),
    apply: (q, raw) => q.where(column, 'in', parseEnumList(name, raw, values)),
  };
}

const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Case-insensitive substring over one or more columns that hold the lower-cased text (lower-cased in
 * JavaScript on write, because SQLite's lower() only folds ASCII).
 */
export function substringFilter(name: string, lowerColumns: string[], description: string): Filter {
  return {
    name,
    description,
    schema: { type: 'string', minLength: 1, maxLength: 200 },
    apply: (q, raw) => {
      const pattern = `%${escapeLike(raw.toLowerCase())}%`;
      return q.where((eb) => eb.or(lowerColumns.map((c) => sql<boolean>`${sql.ref(c)} like ${pattern} escape '\\'`)));
    },
  };
}

/** Exact, case-insensitive match against a lower-cased column. */
export function equalsIgnoreCaseFilter(name: string, lowerColumn: string, description: string): Filter {
  return {
    name,
    description,
    schema: { type: 'string', minLength: 1 },
    apply: (q, raw) => q.where(lowerColumn, '=', raw.trim().toLowerCase()),
  };
}

export function instantFilter(name: string, column: string, bound: 'from' | 'to', description: string): Filter {
  return {
    name,
    description: `${description} RFC 3339 date-time or date (UTC when no offset)${bound === 'to' ? '; a date covers that whole day' : ''}.`,
    schema: { type: 'string', examples: ['2026-01-31', '2026-01-31T12:00:00Z'] },
    apply: (q, raw) => q.where(column, bound === 'from' ? '>=' : '<=', parseInstant(name, raw, bound === 'to')),
  };
}
