import { sql, type RawBuilder } from 'kysely';
import type { Field } from '../../resources/types.ts';
import type { CellType, ExportLayout } from './columns.ts';

/*
 * What the lines a database writes itself (pg-lines.ts for PostgreSQL, sqlite-lines.ts for SQLite) build on,
 * whichever database writes them: which fields they cover, how a name becomes an SQL literal, and the
 * condition that a row's numbers are ones the database writes as JavaScript does.
 */

type Expr = RawBuilder<string>;

/** The cell type of a field as the exports see it (columns.ts), or undefined for one read through a decoder. */
export function cellTypeOf(f: Field): CellType | undefined {
  if (f.decode) return undefined;
  switch (f.type) {
    case 'id':
    case 'integer':
      return 'integer';
    case 'number':
    case 'money':
    case 'datetime':
      return f.type;
    case 'enum':
    case 'string':
      return 'string';
    default:
      return undefined;
  }
}

/** An SQL string literal of any text (both databases' literals hold any character as it is, but `'` doubled). */
export const literal = (text: string): Expr => sql.raw<string>(`'${text.replace(/'/g, "''")}'`);

/**
 * The condition that every number field of a row passes `inRange` (the database's own test of a number it writes
 * as JavaScript does), or undefined when the layout shows no number.
 */
export function everyNumber(layout: ExportLayout, inRange: (x: Expr) => Expr): Expr | undefined {
  const numbers = layout.shape.shown.filter((f) => cellTypeOf(f) === 'number').map((f) => inRange(sql.ref(f.column) as unknown as Expr));
  return numbers.length ? sql<string>`(${sql.join(numbers, sql` and `)})` : undefined;
}
